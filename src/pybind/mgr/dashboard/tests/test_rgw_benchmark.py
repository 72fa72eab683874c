import errno
from unittest.mock import Mock

import cherrypy

from .. import mgr
from ..controllers._version import APIVersion
from ..controllers.rgw_benchmark import RgwBenchmark, RgwBenchmarkProfile, \
    RgwBenchmarkRun, RgwBenchmarkStatus
from ..security import Permission
from ..tests import ControllerTestCase

RUNS = [{'run_id': 'r-1', 'profile': 'quick', 'state': 'complete'},
        {'run_id': 'r-2', 'profile': 'sse', 'state': 'running'}]


def remote_raising(error):
    return Mock(side_effect=error)


def serve(test_case, controllers):
    test_case.setup_controllers(controllers)
    # The test helper of Debian's CherryPy 18 resets the global config after
    # ControllerTestCase.setUpClass turned JSON bodies on (upstream's tox pins 13.1).
    cherrypy.config.update({'tools.json_in.on': True, 'tools.json_in.force': False})


class RgwBenchmarkTest(ControllerTestCase):
    @classmethod
    def setup_server(cls):
        serve(cls, [RgwBenchmark, RgwBenchmarkProfile, RgwBenchmarkRun])

    def _get_exp(self, url):
        self._get(url, version=APIVersion.EXPERIMENTAL)

    def _post_exp(self, url, data=None):
        self._post(url, data, version=APIVersion.EXPERIMENTAL)

    def test_list_runs(self):
        mgr.remote = Mock(return_value=RUNS)
        self._get_exp('/api/rgwbench/run')
        self.assertStatus(200)
        self.assertJsonBody(RUNS)
        mgr.remote.assert_called_once_with('rgwbench', 'api_runs')

    def test_show_run(self):
        mgr.remote = Mock(return_value=RUNS[0])
        self._get_exp('/api/rgwbench/run/r-1')
        self.assertStatus(200)
        self.assertJsonBody(RUNS[0])
        mgr.remote.assert_called_once_with('rgwbench', 'api_run_show', 'r-1', series=True)

    def test_unknown_run_is_404(self):
        mgr.remote = remote_raising(OSError(errno.ENOENT, 'no run r-9'))
        self._get_exp('/api/rgwbench/run/r-9')
        self.assertStatus(404)
        self.assertJsonBody({'detail': 'no run r-9', 'code': 'ENOENT',
                             'component': 'rgwbench'})

    def test_start_run_passes_overrides_as_text(self):
        mgr.remote = Mock(return_value={'run_id': 'r-3'})
        self._post_exp('/api/rgwbench/run', {'profile': 'quick',
                                             'overrides': {'duration': 20, 'repeats': '2'},
                                             'confirm': True})
        self.assertStatus(201)
        self.assertJsonBody({'run_id': 'r-3'})
        mgr.remote.assert_called_once_with('rgwbench', 'api_run', 'quick',
                                           {'duration': '20', 'repeats': '2'}, True, False)

    def test_start_run_unconfirmed_is_refused_by_rgwbench(self):
        mgr.remote = remote_raising(OSError(errno.EINVAL, 'add --yes-i-really-mean-it'))
        self._post_exp('/api/rgwbench/run', {'profile': 'quick'})
        self.assertStatus(400)
        mgr.remote.assert_called_once_with('rgwbench', 'api_run', 'quick', {}, False, False)

    def test_confirm_must_be_true_not_truthy(self):
        mgr.remote = remote_raising(OSError(errno.EINVAL, 'unconfirmed'))
        self._post_exp('/api/rgwbench/run', {'profile': 'quick', 'confirm': 'yes'})
        self.assertStatus(400)
        mgr.remote.assert_called_once_with('rgwbench', 'api_run', 'quick', {}, False, False)

    def test_unknown_override_is_refused_before_rgwbench(self):
        mgr.remote = Mock()
        self._post_exp('/api/rgwbench/run', {'profile': 'quick', 'confirm': True,
                                             'overrides': {'clients': '8'}})
        self.assertStatus(400)
        mgr.remote.assert_not_called()

    def test_start_while_running_is_409(self):
        mgr.remote = remote_raising(OSError(errno.EBUSY, 'run r-2 is in progress'))
        self._post_exp('/api/rgwbench/run', {'profile': 'quick', 'confirm': True})
        self.assertStatus(409)

    def test_refused_by_rgwbench_permission_is_403(self):
        mgr.remote = remote_raising(OSError(errno.EPERM, 'not on a standby'))
        self._post_exp('/api/rgwbench/abort')
        self.assertStatus(403)

    def test_other_errno_is_500(self):
        mgr.remote = remote_raising(OSError(errno.EIO, 'config-key store failed'))
        self._get_exp('/api/rgwbench/run')
        self.assertStatus(500)

    def test_a_refusal_carried_in_a_runtime_error_keeps_its_errno(self):
        remote_text = ('Traceback (most recent call last):\n'
                       '  File "module.py", line 349, in _remote\n'
                       'OSError: [Errno 16] run r-2 is in progress\n')
        mgr.remote = remote_raising(RuntimeError(remote_text))
        self._post_exp('/api/rgwbench/run', {'profile': 'quick', 'confirm': True})
        self.assertStatus(409)
        self.assertJsonBody({'detail': 'run r-2 is in progress', 'code': 'EBUSY',
                             'component': 'rgwbench'})

    def test_a_runtime_error_without_errno_is_500_with_its_last_line(self):
        mgr.remote = remote_raising(RuntimeError('Traceback ...\nKeyError: x'))
        self._get_exp('/api/rgwbench/run')
        self.assertStatus(500)
        self.assertJsonBody({'detail': 'rgwbench failed: KeyError: x',
                             'code': 'rgwbench_error', 'component': 'rgwbench'})

    def test_module_not_enabled_is_404_with_its_own_code(self):
        mgr.remote = remote_raising(ImportError('Module not found'))
        self._get_exp('/api/rgwbench/status')
        self.assertStatus(404)
        self.assertJsonBody({'detail': 'The rgwbench module is not enabled',
                             'code': 'rgwbench_not_enabled', 'component': 'rgwbench'})

    def test_plan(self):
        plan = {'plan': {'steps': []}, 'text': 'plan of quick'}
        mgr.remote = Mock(return_value=plan)
        self._post_exp('/api/rgwbench/profile/quick/plan', {'overrides': {'duration': '5'}})
        self.assertStatus(200)
        self.assertJsonBody(plan)
        mgr.remote.assert_called_once_with('rgwbench', 'api_plan', 'quick', {'duration': '5'})

    def test_empty_override_values_are_left_out(self):
        mgr.remote = Mock(return_value={'plan': {}, 'text': ''})
        self._post_exp('/api/rgwbench/profile/quick/plan',
                       {'overrides': {'duration': '', 'rate': None, 'warmup': '2'}})
        self.assertStatus(200)
        mgr.remote.assert_called_once_with('rgwbench', 'api_plan', 'quick', {'warmup': '2'})

    def test_profiles(self):
        mgr.remote = Mock(return_value=[{'name': 'quick'}])
        self._get_exp('/api/rgwbench/profile')
        self.assertStatus(200)
        self._get_exp('/api/rgwbench/profile/quick')
        self.assertStatus(200)
        self.assertEqual(mgr.remote.call_args_list[-1][0], ('rgwbench', 'api_profile', 'quick'))

    def test_live_none_when_idle(self):
        mgr.remote = Mock(return_value=None)
        self._get_exp('/api/rgwbench/live')
        self.assertStatus(200)
        self.assertJsonBody(None)

    def test_findings_for_a_profile(self):
        mgr.remote = Mock(return_value=[{'id': 'no-rgw-daemon', 'level': 'refuse'}])
        self._get_exp('/api/rgwbench/findings?profile=sse')
        self.assertStatus(200)
        mgr.remote.assert_called_once_with('rgwbench', 'api_findings', 'sse')
        self._get_exp('/api/rgwbench/findings')
        self.assertEqual(mgr.remote.call_args[0], ('rgwbench', 'api_findings', None))

    def test_abort(self):
        mgr.remote = Mock(return_value={'run_id': 'r-2'})
        self._post_exp('/api/rgwbench/abort')
        self.assertStatus(200)
        self.assertJsonBody({'run_id': 'r-2'})

    def test_compare_export_and_remove(self):
        mgr.remote = Mock(return_value=[])
        self._get_exp('/api/rgwbench/run/compare?run_a=r-1&run_b=r-2')
        self.assertStatus(200)
        mgr.remote.assert_called_with('rgwbench', 'api_compare', 'r-1', 'r-2')
        self._get_exp('/api/rgwbench/run/r-1/export')
        self.assertStatus(200)
        mgr.remote.assert_called_with('rgwbench', 'api_export', 'r-1')
        self._delete('/api/rgwbench/run/r-1', version=APIVersion.EXPERIMENTAL)
        self.assertStatus(204)
        mgr.remote.assert_called_with('rgwbench', 'api_run_rm', 'r-1')

    def test_stable_version_is_not_served(self):
        mgr.remote = Mock(return_value=RUNS)
        self._get('/api/rgwbench/run')
        self.assertStatus(415)


class RgwBenchmarkPermissionsTest(ControllerTestCase):
    """Reading needs rgw read; planning, starting and aborting rgw create/update."""

    @classmethod
    def setup_server(cls):
        serve(cls, [RgwBenchmark, RgwBenchmarkProfile, RgwBenchmarkRun])

    def test_each_endpoint_needs_the_rgw_permission_of_what_it_does(self):
        wanted = {
            ('GET', '/api/rgwbench/status'): Permission.READ,
            ('GET', '/api/rgwbench/live'): Permission.READ,
            ('GET', '/api/rgwbench/findings'): Permission.READ,
            ('POST', '/api/rgwbench/abort'): Permission.UPDATE,
            ('GET', '/api/rgwbench/profile'): Permission.READ,
            ('GET', '/api/rgwbench/profile/{profile}'): Permission.READ,
            ('POST', '/api/rgwbench/profile/{profile}/plan'): Permission.CREATE,
            ('GET', '/api/rgwbench/run'): Permission.READ,
            ('GET', '/api/rgwbench/run/{run_id}'): Permission.READ,
            ('POST', '/api/rgwbench/run'): Permission.CREATE,
            ('DELETE', '/api/rgwbench/run/{run_id}'): Permission.DELETE,
            ('GET', '/api/rgwbench/run/{run_id}/export'): Permission.READ,
            ('GET', '/api/rgwbench/run/compare'): Permission.READ,
        }
        found = {}
        for ctrl in (RgwBenchmark, RgwBenchmarkProfile, RgwBenchmarkRun):
            self.assertEqual(ctrl._security_scope, 'rgw')
            for endpoint in self._endpoints_cache[ctrl]:
                found[(endpoint.method, endpoint.url)] = endpoint.func._security_permissions
        self.assertEqual(found, {key: [perm] for key, perm in wanted.items()})


class RgwBenchmarkStatusTest(ControllerTestCase):
    @classmethod
    def setup_server(cls):
        serve(cls, [RgwBenchmarkStatus])

    def test_available(self):
        mgr.remote = Mock(return_value={'release': 'tentacle'})
        self._get('/ui-api/rgwbench/status')
        self.assertStatus(200)
        self.assertJsonBody({'available': True, 'message': None})

    def test_not_enabled(self):
        mgr.remote = remote_raising(ImportError('Module not found'))
        self._get('/ui-api/rgwbench/status')
        self.assertStatus(200)
        self.assertJsonBody({'available': False,
                             'message': 'The rgwbench module is not enabled'})
