"""Profiles: which variants of the cluster a run compares, under which workloads.

A profile is a document (YAML or JSON) with a name, a baseline variant, the
variants (each a mapping of settings under test to values; an empty mapping
is the cluster as it is) and the workloads every variant runs. The built-in
profiles reproduce the published studies rgwbench automates; operators keep
their own in the module's store under `profile/<name>`.

Everything here is checked without a cluster: each setting validates its own
value with `Setting.parse`, each workload with the load engine's own checks.

One file a job: `types` (the frozen dataclasses), `field_checks` (one field, or a
workload), `parsing` (the document), `overrides` (the command line's),
`estimates` (how long a run takes), `builtin` (the built-in profiles), `store`
(the operator's own) and `text` (what `profile ls` and `profile show` print).
"""
from .builtin import (BUILTIN_DOCUMENTS, MSGR2_OFF, MSGR2_ON, NO_TLS, SSE, TLS_INGRESS, TLS_RGW,
                      builtin_names, builtin_profiles)
from .field_checks import (HOST, MAX_BUCKETS, MAX_CONCURRENCY, MAX_DURATION_S, MAX_PROCESSES,
                           MAX_REPEATS, FieldError, check_duration, check_mix, check_op,
                           check_placement, check_size, check_warmup, check_whole, check_workload,
                           default_workload_name)
from .estimates import (AS_IS_ALLOWANCE_S, VARIANT_ALLOWANCE_S, WORKLOAD_ALLOWANCE_S,
                        estimate_seconds, format_duration)
from .overrides import RUN_WORDS, with_overrides
from .parsing import (NAME, PROFILE_FIELDS, VARIANT_FIELDS, VARIANT_NAME, WORKLOAD_FIELDS,
                      WORKLOAD_NAME, parse_profile, parse_workload)
from .store import MAX_STORED, STORE_PREFIX, ProfileInfo, ProfileStore
from .text import profile_to_text, profiles_to_text, settings_text
from .types import (DEFAULT_CONCURRENCY, DEFAULT_DURATION_S, DEFAULT_PROCESSES, DEFAULT_WARMUP_S,
                    Profile, Variant, Workload)

__all__ = [
    'AS_IS_ALLOWANCE_S', 'BUILTIN_DOCUMENTS', 'DEFAULT_CONCURRENCY', 'DEFAULT_DURATION_S',
    'DEFAULT_PROCESSES', 'DEFAULT_WARMUP_S', 'HOST', 'MAX_BUCKETS', 'MAX_CONCURRENCY',
    'MAX_DURATION_S', 'MAX_PROCESSES', 'MAX_REPEATS', 'MAX_STORED', 'MSGR2_OFF', 'MSGR2_ON', 'NAME',
    'NO_TLS', 'PROFILE_FIELDS', 'RUN_WORDS', 'SSE', 'STORE_PREFIX', 'TLS_INGRESS', 'TLS_RGW',
    'VARIANT_ALLOWANCE_S', 'VARIANT_FIELDS', 'VARIANT_NAME', 'WORKLOAD_ALLOWANCE_S',
    'WORKLOAD_FIELDS', 'WORKLOAD_NAME', 'FieldError', 'Profile', 'ProfileInfo', 'ProfileStore',
    'Variant', 'Workload', 'builtin_names', 'builtin_profiles', 'check_duration', 'check_mix',
    'check_op', 'check_placement', 'check_size', 'check_warmup', 'check_whole', 'check_workload',
    'default_workload_name', 'estimate_seconds', 'format_duration', 'parse_profile',
    'parse_workload', 'profile_to_text', 'profiles_to_text', 'settings_text', 'with_overrides',
]
