"""Where a load goes: every RGW daemon of the service under test, or every ingress frontend.

A profile chooses with `target` (`Target`): `rgw`, `ingress`, a list of URLs,
or nothing, and then each variant decides: an ingress the variant puts in
place is loaded through its frontends, else the RGW daemons are, on the
scheme the variant serves (HTTPS when it turns TLS on at RGW, else plain
HTTP). The set is resolved anew for each variant, once its settings are in
effect, from what the cluster reports then (`TargetView`). The load
engine spreads its connections over the targets evenly.
"""
from dataclasses import dataclass
from typing import Any, List, Optional, Protocol, Sequence, Tuple

from ..errors import InvalidInput, NotFound
from ..loadgen.errors import UsageError
from ..loadgen.s3 import Endpoint

AUTO, RGW, INGRESS, URLS = 'auto', 'rgw', 'ingress', 'urls'
HTTP, HTTPS = 'http', 'https'


@dataclass(frozen=True)
class Target:
    """What a profile's `target` names; AUTO: what each variant suggests."""
    kind: str = AUTO
    urls: Tuple[str, ...] = ()

    def to_value(self) -> Optional[str]:
        """The document form: None (not written) for AUTO, else what parse_target reads."""
        if self.kind == AUTO:
            return None
        return ','.join(self.urls) if self.kind == URLS else self.kind

    @classmethod
    def from_value(cls, value: Any) -> 'Target':
        """From to_value's form, unchecked (parse_target checks)."""
        if value is None or value == AUTO:
            return cls()
        if value in (RGW, INGRESS):
            return cls(kind=str(value))
        return cls(kind=URLS, urls=tuple(split_urls(value)))


def split_urls(value: Any) -> List[str]:
    """A comma-separated text (or a list) of URLs as a list, without trailing slashes."""
    items = value if isinstance(value, (list, tuple)) else str(value).split(',')
    return [str(item).strip().rstrip('/') for item in items if str(item).strip()]


def check_urls(urls: Sequence[str]) -> List[str]:
    """The URLs if they make one set of targets; ValueError saying what is wrong."""
    if not urls:
        raise ValueError('no URL given')
    schemes = set()
    for url in urls:
        try:
            schemes.add(Endpoint(url).scheme)
        except UsageError:
            raise ValueError('%r is not an http(s)://HOST:PORT URL' % url)
    if len(schemes) > 1:
        raise ValueError('the URLs must all be http:// or all https://')
    if len(set(urls)) != len(urls):
        raise ValueError('a URL is named twice')
    return list(urls)


def parse_target(value: Any) -> Target:
    """A profile's `target`; ValueError saying what is wrong."""
    if value is None:
        return Target()
    if isinstance(value, str) and value.strip().lower() in (AUTO, RGW, INGRESS):
        return Target.from_value(value.strip().lower())
    if not isinstance(value, (str, list)) or (isinstance(value, str) and '://' not in value):
        raise ValueError('%s is not rgw, ingress or http(s)://HOST:PORT URLs, comma separated'
                         % (repr(value) if isinstance(value, str) else value))
    return Target(kind=URLS, urls=tuple(check_urls(split_urls(value))))


class TargetView(Protocol):
    """What targets are resolved from: the cluster as it is now."""

    def rgw_service(self) -> str: ...

    def rgw_urls(self, scheme: str) -> List[str]:
        """URLs of that scheme of the running daemons of the RGW service under test."""

    def ingress_urls(self) -> List[str]:
        """URLs of the frontends of the ingress in front of that service (none: no ingress)."""


def resolve_targets(target: Target, *, rgw: Sequence[str], ingress: Sequence[str],
                    view: TargetView) -> List[str]:
    """The URLs one variant's load goes to.

    `rgw` and `ingress` are what the variant's settings said clients use (the
    RGW daemons' HTTPS endpoints with TLS at RGW, the ingress it put in
    place); empty: the cluster's own, from `view`.
    """
    if target.kind == URLS:
        return list(target.urls)
    if target.kind == INGRESS or (target.kind == AUTO and ingress):
        found = list(ingress) or view.ingress_urls()
        if not found:
            raise InvalidInput('target: ingress, but no ingress is in front of %s'
                               % view.rgw_service())
        return found
    found = list(rgw) or view.rgw_urls(HTTP) or view.rgw_urls(HTTPS)
    if not found:
        raise NotFound('no RGW daemon of %s lists an endpoint in the service map'
                       % view.rgw_service())
    return found


def unique(urls: Sequence[str]) -> List[str]:
    """The URLs in their order, each once."""
    seen: List[str] = []
    for url in urls:
        if url not in seen:
            seen.append(url)
    return seen
