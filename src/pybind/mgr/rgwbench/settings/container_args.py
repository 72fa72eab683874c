"""The RGW spec's `extra_container_args`, which settings under cephadm add to: the
container runtime's `--cpus` (rgw-cpus) and read-only mounts of the files RGW is
told to read (sse: KMIP certificates, Vault's token file). The operator's own
arguments stay as they are."""
from typing import Any, Callable, Dict, List

from ..cluster.spec_fields import ARGS, argument_text

VOLUME = '--volume'


def takes_container_args(spec_from_json: Callable[[Dict[str, Any]], Any]) -> bool:
    """Whether this release's ServiceSpec keeps `extra_container_args` (Pacific from
    16.2.11, Quincy from 17.2.4, Reef and later): one without it refuses or drops it."""
    probe = {'service_type': 'rgw', 'service_id': 'rgwbench-probe', ARGS: ['--cpus=1']}
    try:
        return bool(getattr(spec_from_json(probe), ARGS, None))
    except Exception:
        return False


def mount_argument(path: str) -> str:
    """A host file seen at the same path in the container, read-only."""
    return '%s=%s:%s:ro' % (VOLUME, path, path)


def mounted(args: List[Any]) -> List[str]:
    """The container paths these arguments mount (`--volume=SRC:DST[:OPTS]`, `-v SRC:DST`)."""
    words = [w for item in args for w in argument_text(item).split()]
    sources = [w[len(VOLUME) + 1:] for w in words if w.startswith(VOLUME + '=')]
    sources += [words[i + 1] for i, w in enumerate(words[:-1]) if w in (VOLUME, '-v')]
    return [(s.split(':') + [''])[1] or s for s in sources]


def with_mounts(args: List[Any], paths: List[str]) -> List[Any]:
    """`args` and a read-only mount of each path not mounted yet, in the order given."""
    there = set(mounted(args))
    added = []
    for path in paths:
        if path not in there:
            added.append(mount_argument(path))
            there.add(path)
    return list(args) + added
