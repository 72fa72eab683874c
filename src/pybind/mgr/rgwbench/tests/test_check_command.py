"""`ceph rgwbench check` as ceph-mgr calls it: options, formats, one-line errors."""
import errno
import json
from typing import Any, Dict, Iterator, Optional, Tuple

import pytest
from mgr_module import HandleCommandResult

from rgwbench.checks import MgrClusterView
from rgwbench.errors import RGWBenchError
from rgwbench.module import Module

from checks_fakes import FakeView


class CheckedModule(Module):
    """The module over a FakeView's data, through the mgr's get() and mon_command()."""

    def __init__(self, view: FakeView) -> None:
        super().__init__('rgwbench', None, None)
        self.view = view
        self._fake_data.update({
            'service_map': view.services, 'osd_map': view.map, 'df': view.df_data,
            'osd_stats': {'osd_stats': view.stats}, 'pg_summary': view.pgs,
            'osd_metadata': view.metadata, 'health': {'json': json.dumps(view.health_data)}})

    def mon_command(self, cmd_dict: Dict[str, Any],
                    inbuf: Optional[str] = None) -> Tuple[int, str, str]:
        if cmd_dict['prefix'] == 'config dump':
            return 0, json.dumps(self.view.config), ''
        if cmd_dict['prefix'] == 'config help':
            default = self.view.defaults.get(cmd_dict['key'])
            if default is None:
                return -errno.ENOENT, '', 'unrecognized key'
            return 0, json.dumps({'name': cmd_dict['key'], 'default': default,
                                  'daemon_default': ''}), ''
        return -errno.EINVAL, '', 'unknown command'


@pytest.fixture(scope='module', autouse=True)
def registered() -> Iterator[None]:
    # As the mgr does once; the lists are the class's, so other test files get them back.
    commands, options = list(Module.COMMANDS), list(Module.MODULE_OPTIONS)
    Module._register_options('rgwbench')
    Module._register_commands('rgwbench')
    yield
    Module.COMMANDS[:], Module.MODULE_OPTIONS[:] = commands, options


def call(mod: Module, **args: Any) -> HandleCommandResult:
    return HandleCommandResult(*mod._handle_command('', dict(args, prefix='rgwbench check')))


def test_check_is_a_read_command_with_profile_and_format() -> None:
    (cmd,) = [c for c in Module.COMMANDS if c['cmd'].startswith('rgwbench check ')
              or c['cmd'] == 'rgwbench check']
    assert cmd['perm'] == 'r'
    assert 'name=profile' in cmd['cmd'] and 'name=format' in cmd['cmd']


def test_check_json_through_the_mgr() -> None:
    view = FakeView().set('client.rgw', 'debug_rgw', '20')
    res = call(CheckedModule(view), format='json')
    assert res.retval == 0, res.stderr
    (finding,) = json.loads(res.stdout)
    assert finding['id'] == 'debug-rgw-raised'
    assert finding['fix'] == 'ceph config rm client.rgw debug_rgw'


def test_check_text_of_a_healthy_cluster() -> None:
    res = call(CheckedModule(FakeView()))
    assert res.retval == 0, res.stderr
    assert res.stdout.startswith('no findings')


def test_check_with_a_builtin_profile_estimates_its_writes() -> None:
    res = call(CheckedModule(FakeView()), profile='quick', format='json')
    assert res.retval == 0, res.stderr
    # its GETs of 4 KiB objects read twice the OSDs' caches (24 GiB), within half the
    # room (70 GiB): the baseline's prefill is removed before threads-256 (a config
    # option) writes its own, so one is held at a time
    found = json.loads(res.stdout)
    # 24 GiB of 4 KiB objects in one bucket: RGW reshards it (11 shards of 100000) as the
    # prefill writes it
    assert [f['id'] for f in found] == ['capacity-estimate', 'bucket-reshard-likely']
    assert found[1]['workload'] == 'get-4KiB' and found[1]['fix'] == \
        'buckets: 6 in workload get-4KiB', found[1]
    evidence = ' '.join(found[0]['evidence'])
    assert 'prefills: 48.0 GiB in all' in evidence, evidence
    assert 'at most 24.0 GiB in the pool at once' in evidence, evidence
    # not sized: the engine's default working set, which the caches hold
    unsized = CheckedModule(FakeView())
    unsized._fake_options['prefill_time'] = 0
    res = call(unsized, profile='quick', format='json')
    assert [f['id'] for f in json.loads(res.stdout)] == ['working-set-in-cache',
                                                         'capacity-estimate']


def test_an_unknown_profile_is_enoent_in_one_line() -> None:
    res = call(CheckedModule(FakeView()), profile='nope')
    assert res.retval == -errno.ENOENT
    assert len(res.stderr.strip().splitlines()) == 1 and "'nope'" in res.stderr


def test_a_failing_mon_command_is_one_line_with_its_errno() -> None:
    class Broken(CheckedModule):
        def mon_command(self, cmd_dict: Dict[str, Any],
                        inbuf: Optional[str] = None) -> Tuple[int, str, str]:
            return -errno.EACCES, '', 'access denied\n'
    res = call(Broken(FakeView()))
    assert res.retval == -errno.EACCES
    assert res.stderr == '`ceph config dump` failed: access denied'


def test_option_defaults_come_from_config_help_once() -> None:
    asked = []

    class Counting(CheckedModule):
        def mon_command(self, cmd_dict: Dict[str, Any],
                        inbuf: Optional[str] = None) -> Tuple[int, str, str]:
            asked.append(cmd_dict.get('key'))
            return super().mon_command(cmd_dict, inbuf)
    view = MgrClusterView(Counting(FakeView()))
    assert view.option_default('debug_rgw') == '1/5'
    assert view.option_default('debug_rgw') == '1/5'
    assert view.option_default('no_such_option') is None
    assert asked == ['debug_rgw', 'no_such_option']
    with pytest.raises(RGWBenchError):
        MgrClusterView(Counting(FakeView()))._mon('no such')


def test_a_mgr_without_maps_yet_says_so_in_one_line() -> None:
    mod = CheckedModule(FakeView())
    mod._fake_data.clear()  # a mgr just started: no maps received yet
    res = call(mod, format='json')
    assert res.retval == -errno.EAGAIN
    assert res.stderr == 'the manager has no OSD map yet; try again in a moment'
