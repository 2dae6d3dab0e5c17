"""Hidden check: HTTP protocol errors while fetching a JWKS become connection errors"""

import http.client
from unittest import mock

import pytest
from jwt import PyJWKClient
from jwt.exceptions import PyJWKClientConnectionError


def _client_failing_with(exc):
    opener = mock.Mock()
    opener.open.side_effect = exc
    return mock.patch("urllib.request.build_opener", return_value=opener)


@pytest.mark.parametrize(
    "exc",
    [
        http.client.RemoteDisconnected("closed"),
        http.client.IncompleteRead(b"{", 10),
        http.client.BadStatusLine("junk"),
    ],
)
def test_fetch_data_wraps_http_exceptions(exc):
    client = PyJWKClient("https://jwks.invalid/keys.json", cache_jwk_set=False)
    with _client_failing_with(exc):
        with pytest.raises(PyJWKClientConnectionError):
            client.fetch_data()


def test_get_signing_keys_wraps_truncated_body():
    client = PyJWKClient("https://jwks.invalid/keys.json")
    response = mock.MagicMock()
    response.__enter__.return_value = response
    response.__exit__.return_value = False
    response.read.side_effect = http.client.IncompleteRead(b"", 5)
    opener = mock.Mock()
    opener.open.return_value = response
    with mock.patch("urllib.request.build_opener", return_value=opener):
        with pytest.raises(PyJWKClientConnectionError):
            client.get_signing_keys()
