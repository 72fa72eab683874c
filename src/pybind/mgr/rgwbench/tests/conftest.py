"""Load the distro's real mgr_module.py, with a fake `ceph_module` under it.

RGWBENCH_MGR_DIR selects whose mgr modules are used (default: the host's,
/usr/share/ceph/mgr); point it into a release's chroot to test against that
release. Its python-common (`ceph`) and `ceph_argparse` are taken from the
same root.
"""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import types
from unittest import mock
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Tuple

import pytest

if TYPE_CHECKING:
    from panel_harness import Harness
    from rgwbench.tests.s3stub import StubS3

MGR_DIR = os.environ.get('RGWBENCH_MGR_DIR', '/usr/share/ceph/mgr')
RELEASE_ROOT = MGR_DIR[:-len('usr/share/ceph/mgr')] if MGR_DIR.endswith(
    'usr/share/ceph/mgr') else '/'
DIST_PACKAGES = os.path.join(RELEASE_ROOT, 'usr/lib/python3/dist-packages')
MODULE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class FakeBaseMgrModule:
    """The C++ side of a mgr module, as plain Python state tests can set."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._fake_store: Dict[str, str] = {}
        self._fake_options: Dict[str, Any] = {}
        self._fake_data: Dict[str, Any] = {}
        self._fake_version = 'ceph version 16.2.15 (0000) pacific (stable)'
        self._fake_release = 'pacific'

    def _ceph_get_version(self) -> str:
        return self._fake_version

    def _ceph_get_release_name(self) -> str:
        return self._fake_release

    def _ceph_get_module_option(self, module: str, key: str, *args: Any) -> Any:
        return self._fake_options.get(key)

    def _ceph_get_option(self, key: str) -> Any:
        # What MgrModule's logging set-up reads; the log file is never opened.
        return {'log_file': os.path.join(tempfile.gettempdir(), 'rgwbench-unittest.log'),
                'debug_mgr': '1/5'}.get(key)

    def _ceph_get_store(self, key: str) -> Optional[str]:
        return self._fake_store.get(key)

    def _ceph_set_store(self, key: str, value: Optional[str]) -> None:
        if value is None:
            self._fake_store.pop(key, None)
        else:
            self._fake_store[key] = value

    def _ceph_get_store_prefix(self, prefix: str) -> Dict[str, str]:
        return {k: v for k, v in self._fake_store.items() if k.startswith(prefix)}

    def _ceph_get(self, data_name: str) -> Any:
        return self._fake_data.get(data_name, {})

    def _ceph_log(self, *args: Any) -> None:
        pass

    def _ceph_get_mgr_id(self) -> str:
        return 'x'

    def _ceph_get_context(self) -> None:
        return None


def _install_fakes() -> None:
    if 'ceph_module' in sys.modules:
        return
    fake = types.ModuleType('ceph_module')
    for name in ('BasePyOSDMap', 'BasePyOSDMapIncremental', 'BasePyCRUSH',
                 'BaseMgrStandbyModule'):
        setattr(fake, name, type(name, (), {}))
    fake.BaseMgrModule = FakeBaseMgrModule  # type: ignore[attr-defined]
    sys.modules['ceph_module'] = fake
    for binding in ('rados', 'cephfs'):
        try:
            __import__(binding)
        except ImportError:
            # Only named in annotations and never called by the code under test.
            sys.modules[binding] = mock.MagicMock()
    # The release's pure-Python libraries, without the rest of its dist-packages.
    links = tempfile.mkdtemp(prefix='rgwbench-pylibs-')
    atexit.register(shutil.rmtree, links, True)
    for entry in ('ceph_argparse.py', 'ceph'):
        source = os.path.join(DIST_PACKAGES, entry)
        if os.path.exists(source):
            os.symlink(source, os.path.join(links, entry))
    sys.path[:0] = [MODULE_PARENT, MGR_DIR, links]


_install_fakes()


@pytest.fixture(scope='session')
def certificate() -> Tuple[str, str]:
    """A self-signed certificate and its key (PEM), for the agents' endpoint."""
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
                        '-subj', '/CN=test', '-keyout', folder + '/k', '-out', folder + '/c'],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(folder + '/c') as cert, open(folder + '/k') as key:
            return cert.read(), key.read()


@pytest.fixture
def stub() -> Iterator['StubS3']:
    """The engine's S3 stub server, keys AK and SK (a file wanting another defines its own)."""
    from rgwbench.tests.s3stub import StubS3  # after _install_fakes
    s = StubS3(access_key='AK', secret_key='SK').start()
    yield s
    s.stop()


@pytest.fixture
def second_stub(stub: 'StubS3') -> Iterator['StubS3']:
    """Another RGW of the same cluster: its own port, the first one's buckets."""
    from rgwbench.tests.s3stub import StubS3  # after _install_fakes
    s = StubS3(access_key='AK', secret_key='SK')
    s.buckets, s.uploads, s.lock = stub.buckets, stub.uploads, stub.lock
    s.start()
    yield s
    s.stop()


@pytest.fixture
def h() -> Iterator['Harness']:
    """The panel's app over a fake backend (test_panel_login, test_panel_pages); every
    answer it gave in the test is checked for the security headers."""
    from panel_harness import Harness, check_security_headers  # after _install_fakes
    harness = Harness()
    yield harness
    assert harness.responses
    for response in harness.responses:       # every answer of every test has them
        check_security_headers(response)


@pytest.fixture(autouse=True)
def agents_never_look_client_bound(monkeypatch: Any) -> None:
    """Agents in unit tests are threads of the test's own process, whose CPU the stub
    RGW shares: whether they look client-bound, or fall behind an open loop's rate,
    depends on the machine, not the test. The findings' own rules are tested in
    test_checks_measured, on figures."""
    from rgwbench.agents import workload_runs
    from rgwbench.checks.measured import measured_findings

    def without_client_bound(results: Any, job: Any = None) -> Any:
        return [f for f in measured_findings(results, job)
                if f.id not in ('client-bound-agent', 'rate-not-held')]
    monkeypatch.setattr(workload_runs, 'measured_findings', without_client_bound)
