"""Hidden check: html_params renders True as a bare boolean attribute and other values as key="value" pairs"""

from wtforms import BooleanField, Form, StringField
from wtforms.widgets.core import html_params


def test_true_is_bare_and_other_values_are_quoted():
    assert (
        html_params(disabled=True, title="a<b", tabindex=0, hidden=False)
        == 'disabled tabindex="0" title="a&lt;b"'
    )


def test_truthy_non_true_values_keep_their_value():
    assert (
        html_params(checked=1, multiple=True, data_x_y=True, value="")
        == 'checked="1" data-x-y multiple value=""'
    )


def test_field_render_kw_booleans():
    class F(Form):
        name = StringField(
            render_kw={"autofocus": True, "spellcheck": False, "placeholder": "Your name"}
        )
        agree = BooleanField(default=True)

    form = F()
    assert form.name() == (
        '<input autofocus id="name" name="name" placeholder="Your name" type="text" value="">'
    )
    assert form.agree() == '<input checked id="agree" name="agree" type="checkbox" value="y">'
    assert form.name(readonly=True, maxlength=5) == (
        '<input autofocus id="name" maxlength="5" name="name" '
        'placeholder="Your name" readonly type="text" value="">'
    )
