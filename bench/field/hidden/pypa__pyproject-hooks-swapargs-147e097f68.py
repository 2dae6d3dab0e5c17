"""Hidden check: BackendUnavailable carries the in-process backend import error as its message"""

import pytest

from pyproject_hooks import BackendUnavailable, BuildBackendHookCaller


def test_unimportable_backend_message(tmp_path):
    hooks = BuildBackendHookCaller(str(tmp_path), "zz_hidden_missing_backend.sub:api")
    with pytest.raises(BackendUnavailable) as info:
        hooks.get_requires_for_build_sdist({})
    assert str(info.value) == "Cannot import 'zz_hidden_missing_backend.sub'"
    assert info.value.backend_name == "zz_hidden_missing_backend.sub:api"
    assert "ModuleNotFoundError" in info.value.traceback


def test_backend_with_failing_import_inside(tmp_path):
    (tmp_path / "backend_dir").mkdir()
    (tmp_path / "backend_dir" / "hidden_be.py").write_text(
        "import zz_hidden_dependency_that_does_not_exist\n"
    )
    hooks = BuildBackendHookCaller(
        str(tmp_path), "hidden_be", backend_path=["backend_dir"]
    )
    with pytest.raises(BackendUnavailable) as info:
        hooks.get_requires_for_build_wheel()
    assert str(info.value) == "Cannot import 'hidden_be'"
    assert info.value.backend_path == [str(tmp_path / "backend_dir")]


def test_in_tree_backend_missing_from_backend_path(tmp_path):
    (tmp_path / "empty_dir").mkdir()
    hooks = BuildBackendHookCaller(
        str(tmp_path), "not_here_backend", backend_path=["empty_dir"]
    )
    with pytest.raises(BackendUnavailable) as info:
        hooks.get_requires_for_build_wheel()
    message = str(info.value)
    assert message.startswith("Cannot find module 'not_here_backend' in [")
    assert "empty_dir" in message
