"""The built-in profiles: the published studies rgwbench automates."""
from typing import Any, Callable, Dict, List, Sequence

from ..settings.base import Setting
from .parsing import parse_profile
from .types import DEFAULT_CONCURRENCY, Profile


def _workload_document(op: str, size: str, concurrency: int = DEFAULT_CONCURRENCY,
                       duration: int = 60, warmup: int = 5,
                       per_rgw: bool = True) -> Dict[str, Any]:
    """One workload as a profile's document writes it, its concurrency per RGW daemon
    (`per_rgw`): a cluster of more RGWs is loaded as hard as the one-RGW cluster the
    defaults suit. Without it, the same requests in flight whatever the RGW count."""
    document = {'op': op, 'size': size, 'concurrency': concurrency,
                'duration': duration, 'warmup': warmup}
    if per_rgw:
        document['concurrency_per_rgw'] = concurrency
    return document


def _put_get(sizes: Sequence[str], concurrency: Callable[[str], int] = lambda s: 16,
             duration: int = 60, warmup: int = 5) -> List[Dict[str, Any]]:
    """A PUT and a GET workload document of each size."""
    return [_workload_document(op, size, concurrency(size), duration, warmup)
            for size in sizes for op in ('put', 'get')]


NO_TLS = {'tls@rgw': 'off', 'tls@ingress': 'off'}
TLS_RGW = {'tls@rgw': 'on', 'tls@ingress': 'off'}
TLS_INGRESS = {'tls@rgw': 'off', 'tls@ingress': 'https'}
#: SSE-S3 through Vault where the cluster has it configured, else the closest it can do
#: (settings/sse.py: ServerSideEncryption.choose); the plan says which
SSE = {'sse': 'auto'}
MSGR2_ON = {'msgr2-secure': 'on'}
MSGR2_OFF = {'msgr2-secure': 'off'}
#: a value equal to the default, set to restart RGW and change nothing else
SAME_AS_DEFAULT = {'client.rgw/rgw_thread_pool_size': 512}
#: thread pools a comparison with RGW's default (512) can show a change of
RGW_THREADS_NOT_DEFAULT = (128, 256, 1024)


def _concurrency_by_size(size: str) -> int:
    # Fewer requests in flight for large objects: each one holds its object in memory.
    return {'64MiB': 8, '256MiB': 4}.get(size, DEFAULT_CONCURRENCY)


BUILTIN_DOCUMENTS: List[Dict[str, Any]] = [
    {'name': 'tls',
     'description': 'TLS of the S3 endpoint: none, at RGW (end to end) or terminated at an '
                    'HAProxy ingress; small (64 KiB) and large (4 MiB) objects. IBM\'s '
                    'security benchmark, part 3, "TLS Termination Performance" (its 4 MiB '
                    'and 64 KiB tables), there on 12 nodes, EC 8+3 and 512 client threads; '
                    'here on the cluster\'s default data pool at 16 requests per RGW',
     'baseline': 'no-tls',
     'variants': [{'name': 'no-tls', 'settings': dict(NO_TLS)},
                  {'name': 'tls-rgw', 'settings': dict(TLS_RGW)},
                  {'name': 'tls-ingress', 'settings': dict(TLS_INGRESS)}],
     'workloads': _put_get(['64KiB', '4MiB'])},
    {'name': 'msgr2',
     'description': 'messenger v2 secure mode between RGW and OSDs and among OSDs, with TLS '
                    'at RGW in both variants; 1 MiB to 256 MiB objects. IBM\'s security '
                    'benchmark, part 3, "Cluster Services Encryption In Transit" (its 4 MiB '
                    'table), there on 12 nodes and EC 8+3; here the OSDs are restarted a '
                    'host at a time (where ok-to-stop allows) when secure mode is applied '
                    'and when it is put back, and few OSDs carry less cross-OSD traffic',
     'baseline': 'tls-rgw',
     'variants': [{'name': 'tls-rgw', 'settings': {**TLS_RGW, **MSGR2_OFF}},
                  {'name': 'tls-rgw-msgr2', 'settings': {**TLS_RGW, **MSGR2_ON}}],
     'workloads': _put_get(['1MiB', '4MiB', '64MiB', '256MiB'], _concurrency_by_size)},
    {'name': 'sse',
     'description': 'server-side encryption over TLS and msgr2 secure mode: TLS at RGW, or '
                    'at an HAProxy ingress; 4 MiB objects. IBM\'s security benchmark, part '
                    '3, "Encryption at Rest (SSE-S3)" (its 4 MiB table), there SSE-S3 with a '
                    'Vault transit KMS on 12 nodes; here sse=auto: SSE-S3 through Vault when '
                    'the module\'s Vault options are set and RGW has SSE-S3 (17.2.4 on), '
                    'SSE-KMS through Vault on older RGWs, else SSE-KMS with the testing '
                    'backend, which has no KMS round trip per object; the plan says which',
     'baseline': 'tls-msgr2',
     'variants': [{'name': 'tls-msgr2', 'settings': {**TLS_RGW, **MSGR2_ON}},
                  {'name': 'sse-rgw', 'settings': {**TLS_RGW, **MSGR2_ON, **SSE}},
                  {'name': 'sse-ingress', 'settings': {**TLS_INGRESS, **MSGR2_ON, **SSE}}],
     'workloads': _put_get(['4MiB'])},
    {'name': 'security',
     'description': 'every security setting in one run against a plain baseline: TLS at RGW '
                    'or ingress, msgr2 secure mode, SSE (sse=auto, as in the sse profile); '
                    '64 KiB and 4 MiB objects. IBM\'s security benchmark, part 3, its three '
                    'sections against one baseline (the post compares each with its own)',
     'baseline': 'no-tls',
     'variants': [{'name': 'no-tls', 'settings': {**NO_TLS, **MSGR2_OFF}},
                  {'name': 'tls-rgw', 'settings': {**TLS_RGW, **MSGR2_OFF}},
                  {'name': 'tls-ingress', 'settings': {**TLS_INGRESS, **MSGR2_OFF}},
                  {'name': 'tls-msgr2', 'settings': {**TLS_RGW, **MSGR2_ON}},
                  {'name': 'sse-rgw', 'settings': {**TLS_RGW, **MSGR2_ON, **SSE}},
                  {'name': 'sse-ingress', 'settings': {**TLS_INGRESS, **MSGR2_ON, **SSE}}],
     'workloads': _put_get(['64KiB', '4MiB'])},
    {'name': 'sizes',
     'description': 'PUT and GET from 4 KiB to 256 MiB objects on the cluster as it is. '
                    'IBM\'s scale benchmark, part 2 (its object sizes), there from 4 to 12 '
                    'nodes on EC 8+3; here one variant, so no change is shown, only the '
                    'figures per size',
     'baseline': 'as-is',
     'variants': [{'name': 'as-is', 'settings': {}}],
     'workloads': _put_get(['4KiB', '64KiB', '1MiB', '4MiB', '64MiB', '256MiB'],
                           _concurrency_by_size)},
    {'name': 'rgw-threads',
     'description': "Red Hat's RGW deployment strategies post, charts 5 and 6 (thread pool "
                    "sizing): RGW's thread pool at 128, 256 and 1024 against the cluster as "
                    'it is (512, the default, unless the operator changed it; the post '
                    'tested 512 and up and wished it had gone lower); RGWs restarted for '
                    'each; 64 KiB and 4 MiB objects at 64 requests per RGW, not the '
                    "post's 32 MB objects from 7 COSBench clients",
     'baseline': 'as-is',
     'variants': [{'name': 'as-is', 'settings': {}}] + [
         {'name': 'threads-%d' % n,
          'settings': {'config': {'client.rgw/rgw_thread_pool_size': n}}}
         for n in RGW_THREADS_NOT_DEFAULT],
     'workloads': _put_get(['64KiB', '4MiB'], lambda s: 64)},
    {'name': 'quick',
     'description': 'a smoke run of a minute or two: the cluster as it is and with 256 RGW '
                    'threads (no certificate, KMS or OSD restart); 4 KiB PUT and GET; its '
                    'deltas count only beyond the noise floor (see calibrate)',
     'baseline': 'as-is',
     'variants': [{'name': 'as-is', 'settings': {}},
                  {'name': 'threads-256',
                   'settings': {'config': {'client.rgw/rgw_thread_pool_size': 256}}}],
     'workloads': _put_get(['4KiB'], duration=10, warmup=2)},
    {'name': 'calibrate',
     'description': 'the noise floor of this cluster: the same settings against themselves '
                    '(RGW restarted for each application), interleaved, 5 repeats; the '
                    'smallest change per figure is kept for later comparisons; 64 KiB '
                    'PUT and GET',
     'baseline': 'default',
     # Both variants set RGW's thread pool to its default (512): each application
     # restarts RGW the way a variant that changes something would.
     'variants': [{'name': name, 'settings': {'config': dict(SAME_AS_DEFAULT)}}
                  for name in ('default', 'default-again')],
     'repeats': 5, 'order': 'interleaved',
     'workloads': _put_get(['64KiB'], duration=30)},
    {'name': 'rgw-sizing',
     'description': "Red Hat's RGW deployment strategies post, charts 1 to 6: CPU cores per "
                    'RGW daemon (rgw-cpus 1, 2, 4: the "4 cores per RGW" finding), two '
                    'co-located RGWs per host against one (rgw-per-host 2), and RGW\'s '
                    'thread pool (256 and 1024 against the default 512), each against the '
                    'cluster as it is; 64 KiB and 4 MiB objects, 64 requests in all for '
                    'every variant, as the post kept its clients while the RGWs changed. '
                    'At small scale: a core limit at or above the cores a host has does '
                    'not bind, and a host that runs OSDs, RGWs and the load together is '
                    'shared by all three',
     'baseline': 'as-is',
     'variants': [{'name': 'as-is', 'settings': {}}] + [
         {'name': 'cpus-%d' % n, 'settings': {'rgw-cpus': n}} for n in (1, 2, 4)] + [
         {'name': 'per-host-2', 'settings': {'rgw-per-host': 2}}] + [
         {'name': 'threads-%d' % n,
          'settings': {'config': {'client.rgw/rgw_thread_pool_size': n}}}
         for n in (256, 1024)],
     'workloads': [_workload_document(op, size, 64, per_rgw=False)
                   for size in ('64KiB', '4MiB') for op in ('put', 'get')]},
    {'name': 'saturation',
     'description': 'the high-water mark of the cluster as it is: requests in flight swept '
                    'at 4, 16, 64 and 256 per RGW daemon, 64 KiB PUT and GET, each a curve '
                    'of throughput and p99 latency with its knee, the first point beyond '
                    'which throughput does not rise by more than the noise. IBM\'s scale '
                    'benchmark, part 2, and Red Hat\'s sizing posts: "the point beyond '
                    'which throughput either remains flat, or decreases", there with many '
                    'client hosts; here the agents share the hosts they load, so the knee '
                    'may be theirs as much as the cluster\'s (see the hosts\' CPU)',
     'baseline': 'as-is',
     'variants': [{'name': 'as-is', 'settings': {}}],
     'workloads': [dict(_workload_document(op, '64KiB', 16, per_rgw=False),
                        concurrency_per_rgw=[4, 16, 64, 256]) for op in ('put', 'get')]},
]


def builtin_profiles(settings: Sequence[Setting]) -> List[Profile]:
    return [parse_profile(doc, settings) for doc in BUILTIN_DOCUMENTS]


def builtin_names() -> List[str]:
    return [str(doc['name']) for doc in BUILTIN_DOCUMENTS]
