"""Whether the orchestrator still holds what a spec change changed."""
from typing import Any, Dict

from rgwbench.cluster.spec_fields import changed_fields, holds, same_spec

PEM = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'


def rgw(**inner: Any) -> Dict[str, Any]:
    return {'service_type': 'rgw', 'service_id': 'default', 'spec': dict(inner)}


def test_the_fields_a_change_changes() -> None:
    before = rgw(rgw_frontend_port=8000)
    after = rgw(rgw_frontend_port=8443, ssl=True, rgw_frontend_ssl_certificate=PEM)
    assert changed_fields(before, after) == ['rgw_frontend_port', 'rgw_frontend_ssl_certificate',
                                             'ssl']
    assert changed_fields(before, before) == []


def test_a_spec_put_back_by_the_orchestrator_does_not_hold_the_change() -> None:
    before = rgw(rgw_frontend_port=8000)
    after = rgw(rgw_frontend_port=8443, ssl=True, rgw_frontend_ssl_certificate=PEM)
    assert not holds(before, before, after)
    assert not holds(None, before, after)
    # The orchestrator's own defaults, and a PEM kept as a list of lines, are the change.
    stored = rgw(rgw_frontend_port=8443, ssl=True, rgw_frontend_type='beast',
                 rgw_frontend_ssl_certificate=PEM.splitlines())
    assert holds(stored, before, after)
    # Going back: a field removed is held by its absence, or an empty value.
    assert holds(rgw(rgw_frontend_port=8000, ssl=False), after, before)


def test_container_arguments_in_either_form() -> None:
    before = rgw()
    after = dict(rgw(), extra_container_args=['--cpus=1'])
    assert not holds(before, before, after)
    assert holds(dict(rgw(), extra_container_args=[{'argument': '--cpus=1', 'split': False}]),
                 before, after)
    # Arguments nobody changed are not compared.
    assert holds(dict(rgw(ssl=True), extra_container_args=[{'argument': '--other'}]),
                 dict(rgw(), extra_container_args=['--other']),
                 dict(rgw(ssl=True), extra_container_args=['--other']))


def test_the_same_spec_read_back() -> None:
    one = dict(rgw(rgw_frontend_port=8000, rgw_frontend_ssl_certificate=PEM),
               extra_container_args=['--cpus=1'])
    assert same_spec(one, dict(rgw(rgw_frontend_port=8000,
                                   rgw_frontend_ssl_certificate=PEM.splitlines()),
                               extra_container_args=[{'argument': '--cpus=1'}]))
    assert not same_spec(one, dict(one, extra_container_args=[]))
    assert not same_spec(one, rgw(rgw_frontend_port=8081, rgw_frontend_ssl_certificate=PEM))
    assert same_spec(None, None) and not same_spec(one, None)
