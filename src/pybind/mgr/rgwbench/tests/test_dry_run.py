"""A plan is a dry run: it writes nothing to the module's store; the apply stores what it made."""
from typing import Any

from fixtures import MemoryStore
from rgwbench.tests.local_ports import free_port
from rgwbench.tests.sse_fakes import context as sse_context
from rgwbench.tests.sse_fakes import plan as sse_plan
from rgwbench.tests.tls_fakes import RGW_SPEC, tls_cluster
from rgwbench.tests.tls_fakes import context as tls_context

from rgwbench.certs.pem import fingerprint, split_pem
from rgwbench.certs.store import Certificates
from rgwbench.settings.applier import SettingsApplier
from rgwbench.settings.sse import KEYS_STORE, ServerSideEncryption
from rgwbench.settings.tls import IngressTls, RGWTls


def tls_applier(store: MemoryStore) -> SettingsApplier:
    ctx = tls_context(tls_cluster([RGW_SPEC]), store, ingress_virtual_ip='127.0.0.1/32',
                      ingress_frontend_port=free_port(), ingress_monitor_port=free_port())
    return SettingsApplier(ctx, [RGWTls(), IngressTls()])


def test_a_tls_plan_leaves_the_store_unchanged() -> None:
    store = MemoryStore()
    store.set_store('unrelated', 'x')
    before = dict(store.data)
    applier = tls_applier(store)
    plans = applier.plan({'tls@rgw': 'on', 'tls@ingress': 'https'})
    assert store.data == before
    summaries = ' '.join(c.summary for p in plans for c in p.changes)
    assert 'a new self-signed certificate' in summaries and 'stored when applied' in summaries
    # Plan again (as `settings apply` does after `settings plan`): the same certificate.
    again = applier.plan({'tls@rgw': 'on', 'tls@ingress': 'https'})
    assert [c.after for p in again for c in p.changes] == \
        [c.after for p in plans for c in p.changes]
    assert store.data == before


def test_the_apply_stores_the_certificate_its_plan_put_in_the_spec() -> None:
    store = MemoryStore()
    applier = tls_applier(store)
    (rgw, ingress) = applier.plan({'tls@rgw': 'on', 'tls@ingress': 'https'})
    pem = rgw.changes[-1].after['spec']['rgw_frontend_ssl_certificate']
    assert ingress.changes[0].after['spec']['ssl_cert'].startswith(
        split_pem(pem).certificate.strip())
    from rgwbench.settings.tls import applied_certificate
    kept = applied_certificate(applier.ctx)  # what verify does first, once applied
    assert kept is not None and kept.source == 'generated'
    assert fingerprint(kept.bundle.certificate) == fingerprint(split_pem(pem).certificate)
    assert Certificates(store).current() == kept
    # Planned again once stored: the stored certificate, nothing new.
    (again, _) = applier.plan({'tls@rgw': 'on', 'tls@ingress': 'https'})
    assert again.changes[-1].after['spec']['rgw_frontend_ssl_certificate'] == pem


def test_an_sse_plan_leaves_the_store_unchanged_and_verify_keeps_its_key() -> None:
    ctx = sse_context()
    changes = sse_plan(ctx, 'kms-testing')
    store: Any = ctx.secrets
    assert store.data == {}
    assert sse_plan(ctx, 'kms-testing') == changes  # the same key in every plan
    key_id = ServerSideEncryption().client_sse(ctx, 'kms-testing')['sse_kms_key_id']
    assert store.data == {}
    cluster: Any = ctx.cluster
    cluster.running[('rgw.4131', 'rgw_crypt_s3_kms_backend')] = 'testing'
    ServerSideEncryption().verify(ctx, 'kms-testing')
    assert key_id in (store.get_store(KEYS_STORE) or '')
    keys = [c.after for c in changes if c.target.endswith('kms_encryption_keys')]
    assert keys == ['%s=%s' % (key_id, ServerSideEncryption()._keys(ctx)['testing_key'])]
