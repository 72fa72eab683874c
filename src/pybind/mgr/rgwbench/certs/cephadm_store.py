"""cephadm's certificate store (Tentacle on): what a TLS spec leaves behind there.

cephadm copies the certificate and key an RGW or ingress spec carries inline into
its store, named for the service, and keeps them there when a spec without TLS
replaces that spec: putting the spec back alone would leave the certificate (and
its private key) in the store. What is removed is only the certificate the
replaced spec carried, and only once the spec that replaces it uses no TLS: an
operator's own certificate, or one a spec refers to, stays.
"""
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..cluster.spec_fields import spec_part
from .pem import pem_blocks

# Per service type: the spec's field with the certificate (and key), and cephadm's
# names for them in its store.
STORED: Dict[str, Tuple[str, str, str]] = {
    'rgw': ('rgw_frontend_ssl_certificate', 'rgw_frontend_ssl_cert', 'rgw_frontend_ssl_key'),
    'ingress': ('ssl_cert', 'ingress_ssl_cert', 'ingress_ssl_key'),
}


def _certificate_of(text: Any) -> Optional[str]:
    """The first certificate of a PEM (a list of lines, as some specs hold it, or text),
    without its whitespace."""
    pem = '\n'.join(text) if isinstance(text, list) else str(text or '')
    found = next((block for kind, block in pem_blocks(pem) if kind == 'CERTIFICATE'), None)
    return ''.join(found.split()) if found else None


def left_certificate(old: Optional[Dict[str, Any]],
                     new: Optional[Dict[str, Any]]) -> Optional[Tuple[str, str, str]]:
    """(certificate, its store name, its key's store name) that cephadm keeps for the
    service once `new` replaces `old`: the one `old` carried inline, when `new` uses no
    TLS. None: nothing of the kind."""
    kind = str((new or old or {}).get('service_type') or '')
    if kind not in STORED or not old or new is None:
        return None
    field, cert_name, key_name = STORED[kind]
    if spec_part(new).get('ssl'):
        return None
    carried = _certificate_of(spec_part(old).get(field)) if spec_part(old).get('ssl') else None
    return (carried, cert_name, key_name) if carried else None


def forget_left_certificate(old: Optional[Dict[str, Any]], new: Optional[Dict[str, Any]],
                            service_name: str, orch: Callable[[Any], Any], mgr: Any,
                            log: Callable[[str], None]) -> List[str]:
    """Remove from cephadm's store the certificate and key `old` carried, if they are still
    the ones there; what was removed."""
    left = left_certificate(old, new)
    if left is None or not hasattr(mgr, 'cert_store_get_cert'):
        return []
    carried, cert_name, key_name = left
    try:
        stored = orch(mgr.cert_store_get_cert(cert_name, service_name=service_name,
                                              no_exception_when_missing=True))
    except Exception as e:  # a release or backend without a certificate store
        log('no certificate store to look in for %s: %s' % (service_name, e))
        return []
    if _certificate_of(stored) != carried:
        return []
    orch(mgr.cert_store_rm_cert(cert_name, service_name=service_name))
    removed = ['%s of %s' % (cert_name, service_name)]
    try:
        orch(mgr.cert_store_rm_key(key_name, service_name=service_name))
        removed.append('%s of %s' % (key_name, service_name))
    except Exception as e:  # no key stored with it
        log('no %s of %s to remove: %s' % (key_name, service_name, e))
    log('removed from cephadm\'s certificate store: %s' % ', '.join(removed))
    return removed
