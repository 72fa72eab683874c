# -*- coding: utf-8 -*-
"""
Object Gateway benchmarks: the rgwbench mgr module's runs, plans and findings.

Every answer comes from the rgwbench module through `mgr.remote`, so the
dashboard, the `ceph rgwbench` CLI and rgwbench's own panel share one
implementation. The module refuses with `OSError(errno, message)`; a module
that is not enabled is an `ImportError`.
"""
import errno
import re
from typing import Any, Callable, Dict, Optional

from .. import mgr
from ..exceptions import DashboardException
from ..security import Scope
from . import APIDoc, APIRouter, BaseController, CreatePermission, Endpoint, \
    EndpointDoc, ReadPermission, RESTController, UIRouter, UpdatePermission
from ._version import APIVersion

MODULE = 'rgwbench'
COMPONENT = 'rgwbench'
NOT_ENABLED = 'The rgwbench module is not enabled'

# The run's words an operator may change (`ceph rgwbench run --profile P --KEY VALUE`).
OVERRIDE_KEYS = ('duration', 'warmup', 'repeats', 'rate', 'rates', 'objects',
                 'multipart_threshold', 'part_size', 'range', 'processes',
                 'payload_signing')

HTTP_STATUS_OF_ERRNO = {
    errno.ENOENT: 404,
    errno.EINVAL: 400,
    errno.EBUSY: 409,
    errno.EEXIST: 409,
    errno.EAGAIN: 409,
    errno.EPERM: 403,
    errno.EACCES: 403,
}

RUN_SCHEMA = {
    'run_id': (str, 'Run identifier'),
    'profile': (str, 'Profile the run was made from'),
    'state': (str, 'running, complete, failed or aborted'),
}
PLAN_SCHEMA = {
    'plan': (dict, 'What the run would do, step by step'),
    'text': (str, 'The plan as `ceph rgwbench plan` prints it'),
}
OVERRIDES_DOC = 'Text values keyed by one of: %s' % ', '.join(OVERRIDE_KEYS)


# How a remote refusal reads once `mgr.remote` turned it into a RuntimeError: the
# text of the remote traceback, whose last line is the exception.
REMOTE_OSERROR = re.compile(r'\w*Error: \[Errno (\d+)\] ([^\n]*)')


def refusal(e: Exception) -> Optional[OSError]:
    """rgwbench's OSError, as raised, or as `mgr.remote` carries it in a RuntimeError."""
    if isinstance(e, OSError):
        return e
    found = REMOTE_OSERROR.findall(str(e))
    if found:
        number, message = found[-1]
        return OSError(int(number), message.strip())
    return None


def call_rgwbench(method: str, *args: Any, **kwargs: Any) -> Any:
    """`mgr.remote('rgwbench', method, ...)`, its refusals as HTTP errors."""
    try:
        return mgr.remote(MODULE, method, *args, **kwargs)
    except ImportError:
        raise DashboardException(msg=NOT_ENABLED, code='rgwbench_not_enabled',
                                 http_status_code=404, component=COMPONENT)
    except (OSError, RuntimeError) as e:
        refused = refusal(e)
        if refused is None:
            last_line = (str(e).strip().splitlines() or [''])[-1]
            raise DashboardException(msg='rgwbench failed: %s' % last_line,
                                     code='rgwbench_error', http_status_code=500,
                                     component=COMPONENT)
        raise DashboardException(msg=refused.strerror or str(refused),
                                 code=errno.errorcode.get(refused.errno),
                                 http_status_code=HTTP_STATUS_OF_ERRNO.get(refused.errno, 500),
                                 component=COMPONENT)


def checked_overrides(overrides: Optional[Dict[str, Any]]) -> Dict[str, str]:
    """The overrides as rgwbench takes them: known keys, text values."""
    if overrides is None:
        return {}
    if not isinstance(overrides, dict):
        raise DashboardException(msg='overrides must be an object', code='EINVAL',
                                 component=COMPONENT)
    unknown = sorted(set(overrides) - set(OVERRIDE_KEYS))
    if unknown:
        raise DashboardException(msg='unknown override(s): %s (known: %s)'
                                 % (', '.join(unknown), ', '.join(OVERRIDE_KEYS)),
                                 code='EINVAL', component=COMPONENT)
    return {key: str(value) for key, value in overrides.items()
            if value is not None and str(value) != ''}


def _call(method: str) -> Callable[..., Any]:
    return lambda *args, **kwargs: call_rgwbench(method, *args, **kwargs)


@APIRouter('/rgwbench', Scope.RGW)
@APIDoc('Object Gateway benchmarks (rgwbench)', 'RgwBenchmark')
class RgwBenchmark(BaseController):
    @Endpoint('GET', version=APIVersion.EXPERIMENTAL)
    @ReadPermission
    @EndpointDoc('Get the cluster as rgwbench sees it: release, RGW daemons, the run '
                 'in progress')
    def status(self) -> Dict[str, Any]:
        return _call('api_status')()

    @Endpoint('GET', version=APIVersion.EXPERIMENTAL)
    @ReadPermission
    @EndpointDoc('Get the run in progress with its progress and live figures '
                 '(null when none runs)')
    def live(self) -> Optional[Dict[str, Any]]:
        return _call('api_live')()

    @Endpoint('GET', query_params=['profile'], version=APIVersion.EXPERIMENTAL)
    @ReadPermission
    @EndpointDoc('Get what stands in the way of a run (`ceph rgwbench check`)',
                 parameters={'profile': (str, 'Check for this profile only')})
    def findings(self, profile: Optional[str] = None) -> Any:
        return _call('api_findings')(profile or None)

    @Endpoint('POST', version=APIVersion.EXPERIMENTAL)
    @UpdatePermission
    @EndpointDoc('Abort the run in progress; the cluster is restored from its journal',
                 responses={200: {'run_id': (str, 'The aborted run')}})
    def abort(self) -> Dict[str, Any]:
        return _call('api_abort')()


@APIRouter('/rgwbench/profile', Scope.RGW)
@APIDoc(group='RgwBenchmark')
class RgwBenchmarkProfile(RESTController):
    RESOURCE_ID = 'profile'

    @RESTController.MethodMap(version=APIVersion.EXPERIMENTAL)
    @EndpointDoc('List the benchmark profiles')
    def list(self) -> Any:
        return _call('api_profiles')()

    @RESTController.MethodMap(version=APIVersion.EXPERIMENTAL)
    @EndpointDoc('Get a profile: its workloads and the settings it compares',
                 parameters={'profile': (str, 'Profile name')})
    def get(self, profile: str) -> Any:
        return _call('api_profile')(profile)

    @RESTController.Resource('POST', version=APIVersion.EXPERIMENTAL)
    @CreatePermission
    @EndpointDoc('Plan a run of the profile: what it would change and measure; '
                 'changes nothing',
                 parameters={'profile': (str, 'Profile name'),
                             'overrides': (dict, OVERRIDES_DOC)},
                 responses={200: PLAN_SCHEMA})
    def plan(self, profile: str, overrides: Optional[Dict[str, Any]] = None) -> Any:
        return _call('api_plan')(profile, checked_overrides(overrides))


@APIRouter('/rgwbench/run', Scope.RGW)
@APIDoc(group='RgwBenchmark')
class RgwBenchmarkRun(RESTController):
    RESOURCE_ID = 'run_id'

    @RESTController.MethodMap(version=APIVersion.EXPERIMENTAL)
    @EndpointDoc('List the stored runs', responses={200: [RUN_SCHEMA]})
    def list(self) -> Any:
        return _call('api_runs')()

    @RESTController.MethodMap(version=APIVersion.EXPERIMENTAL)
    @EndpointDoc('Get a run with its comparison tables and per-daemon figures',
                 parameters={'run_id': (str, 'Run identifier')})
    def get(self, run_id: str) -> Any:
        return _call('api_run_show')(run_id, series=True)

    @RESTController.MethodMap(version=APIVersion.EXPERIMENTAL)
    @EndpointDoc('Start a run of a profile. It changes the cluster (journaled, restored '
                 'after the run): `confirm` must be true',
                 parameters={'profile': (str, 'Profile name'),
                             'overrides': (dict, OVERRIDES_DOC),
                             'confirm': (bool, 'The operator has read the plan'),
                             'force': (bool, 'Start despite findings that refuse it')},
                 responses={201: {'run_id': (str, 'The new run')}})
    def create(self, profile: str, overrides: Optional[Dict[str, Any]] = None,
               confirm: bool = False, force: bool = False) -> Any:
        return _call('api_run')(profile, checked_overrides(overrides),
                                confirm is True, force is True)

    @RESTController.MethodMap(version=APIVersion.EXPERIMENTAL)
    @EndpointDoc('Remove a stored run', parameters={'run_id': (str, 'Run identifier')})
    def delete(self, run_id: str) -> Any:
        return _call('api_run_rm')(run_id)

    @RESTController.Resource('GET', version=APIVersion.EXPERIMENTAL)
    @EndpointDoc('Export a run\'s whole record (histograms and per-second series)',
                 parameters={'run_id': (str, 'Run identifier')})
    def export(self, run_id: str) -> Any:
        return _call('api_export')(run_id)

    @RESTController.Collection('GET', query_params=['run_a', 'run_b'],
                               version=APIVersion.EXPERIMENTAL)
    @EndpointDoc('Compare two runs workload by workload',
                 parameters={'run_a': (str, 'The reference run'),
                             'run_b': (str, 'The run compared with it')})
    def compare(self, run_a: str, run_b: str) -> Any:
        return _call('api_compare')(run_a, run_b)


@UIRouter('/rgwbench', Scope.RGW)
class RgwBenchmarkStatus(BaseController):
    @Endpoint()
    @ReadPermission
    @EndpointDoc('Get whether the rgwbench module is enabled')
    def status(self) -> Dict[str, Any]:
        status: Dict[str, Any] = {'available': False, 'message': None}
        try:
            mgr.remote(MODULE, 'api_status')
            status['available'] = True
        except ImportError:
            status['message'] = NOT_ENABLED
        except (OSError, RuntimeError) as e:
            status['message'] = str(e)
        return status
