"""Hidden check: class_config_section gives full help for traits the class defines and a "See also" for inherited ones"""

from traitlets import CaselessStrEnum, Int, Unicode
from traitlets.config import Configurable

BREAKER = "#" + "-" * 78


class Engine(Configurable):
    """An engine."""

    speed = Int(3, help="How fast.\n\nMore details here.").tag(config=True)
    mode = CaselessStrEnum(["eco", "sport"], default_value="eco", help="Driving mode.").tag(
        config=True
    )


class Turbo(Engine):
    """A turbo engine."""

    boost = Unicode("low", help="Boost level.").tag(config=True)


def test_section_without_classes_shows_full_help():
    assert Engine.class_config_section() == "\n".join(
        [
            BREAKER,
            "# Engine(Configurable) configuration",
            BREAKER,
            "## An engine.",
            "",
            "## Driving mode.",
            "#  Choices: any of ['eco', 'sport'] (case-insensitive)",
            "#  Default: 'eco'",
            "# c.Engine.mode = 'eco'",
            "",
            "## How fast.",
            "#  ",
            "#  More details here.",
            "#  Default: 3",
            "# c.Engine.speed = 3",
            "",
        ]
    )


def test_subclass_section_refers_to_defining_class():
    assert Turbo.class_config_section([Engine, Turbo]) == "\n".join(
        [
            BREAKER,
            "# Turbo(Engine) configuration",
            BREAKER,
            "## A turbo engine.",
            "",
            "## Boost level.",
            "#  Default: 'low'",
            "# c.Turbo.boost = 'low'",
            "",
            "## Driving mode.",
            "#  See also: Engine.mode",
            "# c.Turbo.mode = 'eco'",
            "",
            "## How fast.",
            "#  See also: Engine.speed",
            "# c.Turbo.speed = 3",
            "",
        ]
    )


def test_subclass_alone_owns_inherited_traits():
    section = Turbo.class_config_section()
    assert "See also" not in section
    assert "#  Choices: any of ['eco', 'sport'] (case-insensitive)\n#  Default: 'eco'\n# c.Turbo.mode = 'eco'" in section
