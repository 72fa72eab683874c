"""The RGW spec's container arguments settings add to: mounts found and added."""
from rgwbench.settings.container_args import mount_argument, mounted, with_mounts


def test_mounts_are_found_in_every_spelling_a_spec_may_hold() -> None:
    args = ['--volume=/a:/b:ro', '-v /c:/d', {'argument': '--volume /e:/e', 'split': True},
            '--cpus=1', '-v', '/f']
    assert mounted(args) == ['/b', '/d', '/e', '/f']


def test_a_file_is_mounted_once_at_its_own_path_and_other_arguments_stay() -> None:
    args = ['--cpus=1', '--volume=/t:/t:ro']
    assert with_mounts(args, ['/t', '/k', '/k']) == args + [mount_argument('/k')]
    assert mount_argument('/k') == '--volume=/k:/k:ro'
    assert with_mounts(args, []) == args and with_mounts([], []) == []
