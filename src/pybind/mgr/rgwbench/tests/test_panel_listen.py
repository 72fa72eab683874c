"""Where the panel listens by default, and its TLS handshakes: real servers on 127.0.0.1.

The panel's service starts the real cheroot server over a fake mgr that says
its address is 127.0.0.1 (the mgr map's first address, `get_mgr_ip`).
"""
import socket
import time
from typing import Iterator, List

import pytest
from mgr_util import build_url
from panel_harness import FakeBackend
from rgwbench.tests.local_ports import free_port
from rgwbench.tests.panel_fakes import FakeApp, FakeHost, FakeLog, Log, get

from rgwbench.certs.pem import self_signed_certificate
from rgwbench.panel.server import PanelServer
from rgwbench.panel.service import Panel
from rgwbench.web import handshake


class LoopbackMgr(FakeHost):
    def get_mgr_ip(self) -> str:
        return '127.0.0.1'


@pytest.fixture
def panels() -> Iterator[List[Panel]]:
    made: List[Panel] = []
    yield made
    for panel in made:
        panel.stop()


def real_panel(host: FakeHost, made: List[Panel]) -> Panel:
    panel = Panel(host, FakeBackend(), lambda app: PanelServer(app, Log()), build_url,
                  FakeLog())
    made.append(panel)
    return panel


def bound(panel: Panel) -> str:
    server = panel._server
    assert isinstance(server, PanelServer) and server._server is not None
    return str(server._server.socket.getsockname()[0])


def test_by_default_the_panel_listens_on_the_managers_own_address_only(
        panels: List[Panel]) -> None:
    port = free_port()
    panel = real_panel(LoopbackMgr(panel_port=port, panel_ssl=False), panels)
    panel.start()
    assert panel.error is None
    assert bound(panel) == '127.0.0.1'              # not '::' nor '0.0.0.0'
    assert get(port)[0] == 200                       # the login page
    assert panel.url == 'http://127.0.0.1:%d/' % port
    assert panel.describe()['address'] == '127.0.0.1'


def test_every_address_only_when_the_operator_sets_it(panels: List[Panel]) -> None:
    port = free_port()
    panel = real_panel(LoopbackMgr(panel_port=port, panel_ssl=False,
                                   panel_address='0.0.0.0'), panels)
    panel.start()
    assert bound(panel) == '0.0.0.0'
    assert panel.url == 'http://127.0.0.1:%d/' % port   # the URL names the mgr's address


def test_no_address_of_the_manager_serves_nothing_and_says_what_to_set(
        panels: List[Panel]) -> None:
    class NoAddress(FakeHost):
        def get_mgr_ip(self) -> str:
            return ''
    panel = real_panel(NoAddress(panel_port=free_port(), panel_ssl=False), panels)
    panel.start()
    assert panel._server is None and panel.url is None
    assert 'panel_address' in str(panel.error)
    with socket.socket() as probe:
        probe.settimeout(2)
        assert probe.connect_ex(('127.0.0.1', panel.wanted().port)) != 0


@pytest.fixture
def https_port() -> Iterator[int]:
    """A real HTTPS panel server on 127.0.0.1, stopped after the test."""
    cert, key = self_signed_certificate('rgwbench-test', ['127.0.0.1'])
    port = free_port()
    server = PanelServer(FakeApp(), Log())  # type: ignore[arg-type]
    server.start('127.0.0.1', port, (cert, key))
    yield port
    server.stop()


def test_clients_that_never_shake_hands_hold_up_no_other(https_port: int) -> None:
    # Each of them held cheroot's accept thread for its 10 s timeout, one after another.
    silent = [socket.create_connection(('127.0.0.1', https_port), timeout=60)
              for _ in range(3)]
    try:
        time.sleep(0.5)                  # the server has accepted them
        began = time.monotonic()
        assert get(https_port, tls=True) == (200, b'ok:/login')
        assert time.monotonic() - began < 8
    finally:
        for client in silent:
            client.close()


def test_a_handshake_not_done_in_time_is_cut_off(https_port: int,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(handshake, 'HANDSHAKE_TIMEOUT_S', 1.0)
    with socket.create_connection(('127.0.0.1', https_port), timeout=30) as silent:
        began = time.monotonic()
        assert silent.recv(1) == b''     # closed by the server
        assert time.monotonic() - began < 7   # not after cheroot's 10 s
