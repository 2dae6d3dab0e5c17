"""Hidden check: multipart form values keep their non-ASCII text on attribute access"""

import io
import wsgiref.util

from bottle import BaseRequest


def _environ(fields, files=()):
    boundary = "h3boundary"
    body = ""
    for name, value in fields:
        body += "--%s\r\nContent-Disposition: form-data; name=\"%s\"\r\n\r\n%s\r\n" % (boundary, name, value)
    for name, filename, content in files:
        body += ("--%s\r\nContent-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\n"
                 "Content-Type: text/plain\r\n\r\n%s\r\n") % (boundary, name, filename, content)
    body += "--%s--\r\n" % boundary
    data = body.encode("utf8")
    env = {"REQUEST_METHOD": "POST", "CONTENT_TYPE": "multipart/form-data; boundary=" + boundary,
           "CONTENT_LENGTH": str(len(data)), "wsgi.input": io.BytesIO(data)}
    wsgiref.util.setup_testing_defaults(env)
    return env


def test_form_attribute_and_getunicode():
    request = BaseRequest(_environ([("city", "Zürich"), ("word", "日本語")]))
    assert request.forms.city == "Zürich"
    assert request.forms.getunicode("word") == "日本語"
    assert request.forms.decode()["city"] == "Zürich"


def test_repeated_values_decoded():
    request = BaseRequest(_environ([("tag", "ä"), ("tag", "ö"), ("n", "1")], [("up", "f.txt", "x")]))
    assert request.forms.decode().getall("tag") == ["ä", "ö"]
    assert request.forms.tag == "ö"
    assert request.forms.n == "1"
    assert request.files.up.filename == "f.txt"
