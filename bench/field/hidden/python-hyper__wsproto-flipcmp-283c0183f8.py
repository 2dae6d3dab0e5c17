"""Hidden check: a server may stream RejectData only while in the REJECTING state"""

import h11
import pytest

from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import RejectConnection, RejectData, Request
from wsproto.utilities import LocalProtocolError


def _server_with_request():
    client = WSConnection(ConnectionType.CLIENT)
    server = WSConnection(ConnectionType.SERVER)
    server.receive_data(client.send(Request(host="example.org", target="/chat")))
    assert isinstance(next(server.events()), Request)
    return client, server


def test_chunked_rejection_body_reaches_client():
    client, server = _server_with_request()
    wire = server.send(
        RejectConnection(
            status_code=403,
            headers=[(b"content-type", b"text/plain")],
            has_body=True,
        )
    )
    assert server.state == ConnectionState.REJECTING
    wire += server.send(RejectData(data=b"not ", body_finished=False))
    assert server.state == ConnectionState.REJECTING
    wire += server.send(RejectData(data=b"allowed", body_finished=True))
    assert server.state == ConnectionState.CLOSED

    client.receive_data(wire)
    events = list(client.events())
    assert isinstance(events[0], RejectConnection)
    assert events[0].status_code == 403
    body = b"".join(e.data for e in events[1:] if isinstance(e, RejectData))
    assert body == b"not allowed"
    assert events[-1].body_finished


def test_raw_h11_client_sees_rejection_body():
    h11_client = h11.Connection(h11.CLIENT)
    server = WSConnection(ConnectionType.SERVER)
    server.receive_data(
        h11_client.send(
            h11.Request(
                method="GET",
                target="/ws",
                headers=[
                    (b"Host", b"example.org"),
                    (b"Connection", b"Upgrade"),
                    (b"Upgrade", b"websocket"),
                    (b"Sec-WebSocket-Version", b"13"),
                    (b"Sec-WebSocket-Key", b"dGhlIHNhbXBsZSBub25jZQ=="),
                ],
            )
        )
    )
    out = server.send(
        RejectConnection(
            status_code=429,
            headers=[(b"content-length", b"6")],
            has_body=True,
        )
    )
    out += server.send(RejectData(data=b"slow ", body_finished=False))
    out += server.send(RejectData(data=b"!", body_finished=True))
    h11_client.receive_data(out)
    response = h11_client.next_event()
    assert response.status_code == 429
    data = b""
    while True:
        event = h11_client.next_event()
        if isinstance(event, h11.EndOfMessage):
            break
        data += event.data
    assert data == b"slow !"


def test_reject_data_outside_rejecting_state_is_refused():
    _, server = _server_with_request()
    with pytest.raises(LocalProtocolError):
        server.send(RejectData(data=b"too early"))
    server.send(RejectConnection(status_code=400, has_body=True))
    server.send(RejectData(data=b"bye", body_finished=True))
    with pytest.raises(LocalProtocolError):
        server.send(RejectData(data=b"too late"))
