"""Hidden check: on_post_build writes each redirect page at the old page's HTML path inside site_dir"""

import os

from mkdocs.structure.files import File, Files

from mkdocs_redirects.plugin import RedirectPlugin


def _build(tmp_path, redirect_maps, pages, use_directory_urls):
    docs = tmp_path / "docs"
    site = tmp_path / "site"
    docs.mkdir()
    site.mkdir()
    plg = RedirectPlugin()
    errors, warnings = plg.load_config({"redirect_maps": redirect_maps})
    assert not errors
    files = Files([File(p, str(docs), str(site), use_directory_urls) for p in pages])
    config = {"use_directory_urls": use_directory_urls, "site_dir": str(site)}
    plg.on_files(files, config)
    plg.on_post_build(config)
    return site


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_directory_urls_writes_nested_index(tmp_path):
    site = _build(
        tmp_path,
        {"guides/setup.md": "manual/install.md"},
        ["manual/install.md"],
        True,
    )
    target = site / "guides" / "setup" / "index.html"
    assert target.is_file()
    assert 'href="../../manual/install/"' in _read(target)


def test_flat_urls_external_target(tmp_path):
    site = _build(
        tmp_path,
        {"changelog.md": "https://example.com/releases#v2"},
        [],
        False,
    )
    target = site / "changelog.html"
    assert target.is_file()
    assert "https://example.com/releases#v2" in _read(target)


def test_several_redirects_all_land_in_site_dir(tmp_path):
    site = _build(
        tmp_path,
        {
            "api/v1/users.md": "reference/accounts.md#list",
            "faq.md": "support/questions.md",
        },
        ["reference/accounts.md", "support/questions.md"],
        False,
    )
    users = site / "api" / "v1" / "users.html"
    faq = site / "faq.html"
    assert users.is_file() and faq.is_file()
    assert 'href="../../reference/accounts.html#list"' in _read(users)
    assert 'href="support/questions.html"' in _read(faq)
    assert sorted(os.listdir(site)) == ["api", "faq.html"]
