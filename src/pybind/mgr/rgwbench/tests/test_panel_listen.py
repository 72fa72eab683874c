"""Where the panel listens by default, and its TLS handshakes: real servers on 127.0.0.1.

The panel's service starts the real cheroot server over a fake mgr that says
its address is 127.0.0.1 (the mgr map's first address, `get_mgr_ip`).
"""
import socket
from typing import Iterator, List

import pytest
from mgr_util import build_url
from panel_harness import FakeBackend
from test_panel_server import Log, free_port, get
from test_panel_service import FakeHost, FakeLog

from rgwbench.panel.server import PanelServer
from rgwbench.panel.service import Panel


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
