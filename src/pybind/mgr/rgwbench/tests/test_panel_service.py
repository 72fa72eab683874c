"""The panel's service (start, restart, stop, the URL it publishes) over fake servers."""
import json
from typing import Any, List, Optional, Tuple

import pytest
from mgr_util import build_url
from rgwbench.tests.panel_fakes import FakeHost, FakeLog
from panel_harness import PASSWORD, FakeBackend

from rgwbench.panel.app import PanelApp
from rgwbench.panel.service import Listen, Panel, panel_to_text
from rgwbench.certs.pem import describe_certificate, self_signed_certificate


# -- the service --------------------------------------------------------------------


class FakeServer:
    def __init__(self, app: PanelApp, fail: Optional[Exception]) -> None:
        self.app = app
        self.fail = fail
        self.started: List[Tuple[str, int, Optional[Tuple[str, str]]]] = []
        self.stopped = 0

    def start(self, address: str, port: int, tls: Optional[Tuple[str, str]]) -> None:
        self.started.append((address, port, tls))
        if self.fail is not None:
            raise self.fail

    def stop(self) -> None:
        self.stopped += 1


class Service:
    """A Panel over a fake host and fake servers."""

    def __init__(self, **options: Any) -> None:
        self.host = FakeHost(**options)
        self.servers: List[FakeServer] = []
        self.fail: Optional[Exception] = None
        self.log = FakeLog()
        self.backend = FakeBackend()
        self.panel = Panel(self.host, self.backend, self.make_server, build_url, self.log)

    def make_server(self, app: PanelApp) -> FakeServer:
        server = FakeServer(app, self.fail)
        self.servers.append(server)
        return server


def test_the_panel_over_https_with_a_self_signed_certificate() -> None:
    service = Service(panel_ssl=True, panel_port=9443)
    service.panel.start()
    [server] = service.servers
    assert server.app is service.panel.app
    [(address, port, tls)] = server.started
    assert (address, port) == ('192.0.2.10', 9443)
    assert tls is not None
    cert, key = tls
    assert cert.startswith('-----BEGIN CERTIFICATE-----')
    assert 'PRIVATE KEY-----' in key
    info = describe_certificate(cert)
    assert 'IP:192.0.2.10' in info['sans']
    assert 'rgwbench-panel' in info['subject']
    assert service.host.uris == ['https://192.0.2.10:9443/']
    described = service.panel.describe()
    assert described['serving'] is True
    assert described['url'] == 'https://192.0.2.10:9443/'
    assert described['error'] is None
    assert (described['address'], described['port'], described['tls']) == ('192.0.2.10', 9443, True)
    assert described['certificate']['source'] == 'generated'
    assert described['certificate']['fingerprint_sha256'] == info['fingerprint_sha256']
    text = json.dumps(described)
    assert 'PRIVATE KEY' not in text and key.strip() not in text
    assert 'BEGIN CERTIFICATE' not in text
    assert 'PRIVATE KEY' not in panel_to_text(described)
    assert 'self-signed' in panel_to_text(described)
    # a restart serves the same certificate: it is kept, not made anew
    service.panel.restart()
    assert server.stopped == 1
    assert service.servers[1].started == [('192.0.2.10', 9443, (cert, key))]


def test_the_panel_over_http_on_its_own_address() -> None:
    service = Service(panel_address='192.0.2.77', panel_port=8080, panel_ssl=False)
    service.panel.start()
    assert service.servers[0].started == [('192.0.2.77', 8080, None)]
    assert service.host.uris == ['http://192.0.2.77:8080/']
    described = service.panel.describe()
    assert described['certificate'] is None
    assert described['address'] == '192.0.2.77'
    assert service.host.get_store_prefix('panel/') == {}     # no certificate made


def test_the_panel_defaults() -> None:
    service = Service()
    service.panel.start()
    assert service.servers[0].started == [('192.0.2.10', 9494, None)]
    assert service.host.uris == ['http://192.0.2.10:9494/']
    described = service.panel.describe()
    assert described['password_set'] is False
    assert described['sessions'] == 0
    assert described['session_timeout_s'] == 28800


def test_a_server_that_cannot_start() -> None:
    service = Service(panel_port=9494)
    service.fail = OSError(98, 'Address already in use')
    service.panel.start()
    assert len(service.servers) == 1
    described = service.panel.describe()
    assert described['serving'] is False
    assert described['url'] is None
    assert 'Address already in use' in described['error']
    assert 'OSError' in described['error']
    assert service.host.uris == []
    assert [level for level, _ in service.log.lines] == ['error']
    assert 'Address already in use' in service.log.lines[0][1]
    assert 'not serving (OSError' in panel_to_text(described)
    # the next option change tries again, even with the same options
    service.fail = None
    service.panel.restart_if_changed()
    assert service.panel.describe()['serving'] is True
    assert service.panel.describe()['error'] is None
    assert service.host.uris == ['http://192.0.2.10:9494/']


def test_a_restart_that_fails_unpublishes_the_old_url() -> None:
    service = Service(panel_port=9494, panel_ssl=False)
    service.panel.start()
    service.fail = OSError(98, 'Address already in use')
    service.host.options['panel_port'] = 9595
    service.panel.restart_if_changed()
    assert service.host.uris == ['http://192.0.2.10:9494/', '']
    assert service.panel.describe()['url'] is None
    assert service.panel.describe()['serving'] is False


def test_restart_if_changed() -> None:
    service = Service(panel_port=9494, panel_ssl=False)
    service.panel.start()
    service.host.options['panel_session_timeout'] = 600       # not where it listens
    service.panel.restart_if_changed()
    assert len(service.servers) == 1 and service.servers[0].stopped == 0
    assert service.host.uris == ['http://192.0.2.10:9494/']
    service.host.options['panel_port'] = 9595
    service.panel.restart_if_changed()
    first, second = service.servers
    assert first.stopped == 1
    assert second.started == [('192.0.2.10', 9595, None)]
    assert service.host.uris[-1] == 'http://192.0.2.10:9595/'
    assert service.panel.describe()['url'] == 'http://192.0.2.10:9595/'
    assert service.panel.wanted() == Listen('', 9595, False)
    service.panel.restart_if_changed()
    assert len(service.servers) == 2 and second.stopped == 0


def test_stop() -> None:
    service = Service()
    service.panel.start()
    service.panel.stop()
    assert service.servers[0].stopped == 1
    assert service.host.uris == ['http://192.0.2.10:9494/', '']
    described = service.panel.describe()
    assert described['serving'] is False and described['url'] is None
    service.panel.stop()                       # twice: nothing more to stop
    assert service.servers[0].stopped == 1


def test_a_start_after_the_stop_does_not_serve() -> None:
    # the module starts the panel in a thread of its own: a shutdown may come first
    service = Service()
    service.panel.stop()
    service.panel.start()
    service.panel.restart_if_changed()
    service.panel.restart()
    assert service.servers == []
    assert service.host.uris == []
    assert service.panel.describe()['serving'] is False


def test_a_failing_stop_is_logged() -> None:
    service = Service()
    service.panel.start()

    def broken() -> None:
        raise RuntimeError('engine stuck')

    service.servers[0].stop = broken  # type: ignore[method-assign]
    service.panel.stop()
    assert ('exception', 'stopping the rgwbench panel failed') in service.log.lines
    assert service.panel.describe()['serving'] is False


def test_a_password_change_ends_the_panels_sessions() -> None:
    service = Service(panel_session_timeout=600)
    panel = service.panel
    panel.passwords.iterations = 1000
    panel.passwords.set(PASSWORD)
    session = panel.sessions.open(panel.passwords.version())
    assert panel.describe()['sessions'] == 1
    assert panel.describe()['password_set'] is True
    assert panel.describe()['session_timeout_s'] == 600
    assert session.expires - panel.sessions.clock() == pytest.approx(600, abs=5)
    panel.password_changed()
    assert panel.describe()['sessions'] == 0
    assert panel.sessions.find(session.token, panel.passwords.version()) is None


def test_a_self_signed_key_is_made_in_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    # In a file, a mgr killed while openssl ran left the key in a temp folder.
    def no_file(*args: Any, **kwargs: Any) -> None:
        raise AssertionError('a file was made for the key')
    monkeypatch.setattr('tempfile.mkdtemp', no_file)
    monkeypatch.setattr('tempfile.mkstemp', no_file)
    cert, key = self_signed_certificate('rgwbench-test', ['127.0.0.1', 'host-a'])
    assert cert.startswith('-----BEGIN CERTIFICATE-----') and 'PRIVATE KEY-----' in key
    assert 'BEGIN CERTIFICATE' not in key and 'PRIVATE KEY' not in cert
    info = describe_certificate(cert)
    assert 'IP:127.0.0.1' in info['sans'] and 'DNS:host-a' in info['sans']
