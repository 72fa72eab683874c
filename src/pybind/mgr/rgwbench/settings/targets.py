"""The cluster as target resolution sees it (targets.TargetView), read through settings."""
from typing import List

from ..targets import Target, resolve_targets
from .base import ClientSide, SettingContext
from .tls import ingress_urls, rgw_urls


class ClusterTargets:
    """RGW daemons and ingress frontends of the service under test, as the cluster runs them."""

    def __init__(self, ctx: SettingContext) -> None:
        self.ctx = ctx

    def rgw_service(self) -> str:
        return self.ctx.rgw_service()

    def rgw_urls(self, scheme: str) -> List[str]:
        return rgw_urls(self.ctx, scheme)

    def ingress_urls(self) -> List[str]:
        return ingress_urls(self.ctx)


def client_targets(ctx: SettingContext, target: Target, client: ClientSide) -> ClientSide:
    """The client side with the URLs the load goes to under it, resolved now."""
    urls = resolve_targets(target, rgw=client.rgw, ingress=client.ingress,
                           view=ClusterTargets(ctx))
    return client._replace(targets=tuple(urls))
