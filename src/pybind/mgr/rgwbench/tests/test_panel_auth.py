"""The panel's password, sessions and token comparison, and the brake on wrong passwords."""
import base64
import errno
import hashlib
import json
import time
from typing import Dict, List, Optional

import pytest
from fixtures import Clock, MemoryStore

from rgwbench.web.brake import AuthBrake, source_of
from rgwbench.errors import InvalidInput
from rgwbench.panel.auth import (MAX_LENGTH, MIN_LENGTH, PASSWORD_KEY, PasswordStore, Sessions,
                                 same_token)

ITERATIONS = 1000          # the real 200000 are slow; the scheme is the same
PASSWORD = 'correct horse battery'


def stored(store: MemoryStore) -> Dict[str, object]:
    data = json.loads(store.data[PASSWORD_KEY])
    assert isinstance(data, dict)
    return data


# -- PasswordStore -------------------------------------------------------------------
def test_password_is_kept_as_a_salted_pbkdf2_hash() -> None:
    store = MemoryStore()
    PasswordStore(store, iterations=ITERATIONS).set(PASSWORD)
    assert list(store.data) == [PASSWORD_KEY]
    assert PASSWORD not in store.data[PASSWORD_KEY]
    data = stored(store)
    assert data['scheme'] == 'pbkdf2-sha256'
    assert data['iterations'] == ITERATIONS
    salt = base64.b64decode(str(data['salt']))
    assert len(salt) >= 16
    expected = hashlib.pbkdf2_hmac('sha256', PASSWORD.encode('utf-8'), salt, ITERATIONS)
    assert base64.b64decode(str(data['hash'])) == expected


def test_the_same_password_twice_has_another_salt_and_hash() -> None:
    store = MemoryStore()
    passwords = PasswordStore(store, iterations=ITERATIONS)
    passwords.set(PASSWORD)
    first = stored(store)
    passwords.set(PASSWORD)
    second = stored(store)
    assert first['salt'] != second['salt']
    assert first['hash'] != second['hash']
    assert passwords.verify(PASSWORD)


def test_verify_right_and_wrong() -> None:
    passwords = PasswordStore(MemoryStore(), iterations=ITERATIONS)
    assert not passwords.verify(PASSWORD)          # nothing set: nobody gets in
    assert not passwords.verify('')
    passwords.set(PASSWORD)
    assert passwords.verify(PASSWORD)
    assert not passwords.verify(PASSWORD + 'x')
    assert not passwords.verify(PASSWORD[:-1])
    assert not passwords.verify(PASSWORD.upper())
    assert not passwords.verify('')
    assert not passwords.verify('x' * (MAX_LENGTH + 1))


def test_a_hash_made_with_other_iterations_still_verifies() -> None:
    store = MemoryStore()
    PasswordStore(store, iterations=ITERATIONS).set(PASSWORD)
    later = PasswordStore(store, iterations=ITERATIONS * 2)
    assert later.verify(PASSWORD)
    assert not later.verify('another password')


@pytest.mark.parametrize('short', ['', 'a', 'x' * (MIN_LENGTH - 1), 'x' * (MIN_LENGTH - 1) + '\n',
                                   'x' * (MIN_LENGTH - 1) + '\r\n', '\n' * 10])
def test_a_short_password_is_refused_and_nothing_stored(short: str) -> None:
    store = MemoryStore()
    passwords = PasswordStore(store, iterations=ITERATIONS)
    with pytest.raises(InvalidInput) as caught:
        passwords.set(short)
    assert caught.value.errno == -errno.EINVAL
    assert str(MIN_LENGTH) in str(caught.value)
    assert store.data == {}
    assert not passwords.is_set()


def test_a_refused_password_leaves_the_old_one() -> None:
    store = MemoryStore()
    passwords = PasswordStore(store, iterations=ITERATIONS)
    passwords.set(PASSWORD)
    before = dict(store.data)
    for bad in ('short', 'y' * (MAX_LENGTH + 1)):
        with pytest.raises(InvalidInput) as caught:
            passwords.set(bad)
        assert caught.value.errno == -errno.EINVAL
    assert store.data == before
    assert passwords.verify(PASSWORD)


def test_the_shortest_and_longest_passwords_are_taken() -> None:
    passwords = PasswordStore(MemoryStore(), iterations=ITERATIONS)
    for good in ('p' * MIN_LENGTH, 'q' * MAX_LENGTH):
        passwords.set(good)
        assert passwords.verify(good)


def test_the_newline_of_a_password_file_is_stripped() -> None:
    store = MemoryStore()
    passwords = PasswordStore(store, iterations=ITERATIONS)
    passwords.set(PASSWORD + '\n')             # `-i file` as an editor writes it
    assert passwords.verify(PASSWORD)
    assert not passwords.verify(PASSWORD + '\n')
    passwords.set(PASSWORD + '\r\n')           # and as a Windows editor does
    assert passwords.verify(PASSWORD)
    passwords.set('  ' + PASSWORD + '  \n')    # but only the line ending goes
    assert passwords.verify('  ' + PASSWORD + '  ')
    assert not passwords.verify(PASSWORD)


def test_generate_makes_a_password_that_verifies() -> None:
    store = MemoryStore()
    passwords = PasswordStore(store, iterations=ITERATIONS)
    first = passwords.generate()
    assert len(first) >= 16
    assert passwords.verify(first)
    assert first not in store.data[PASSWORD_KEY]
    second = passwords.generate()
    assert second != first
    assert passwords.verify(second)
    assert not passwords.verify(first)


def test_version_changes_with_the_password() -> None:
    passwords = PasswordStore(MemoryStore(), iterations=ITERATIONS)
    assert passwords.version() == ''
    passwords.set(PASSWORD)
    one = passwords.version()
    assert one and one == passwords.version()
    passwords.set(PASSWORD)                    # even the same password again
    two = passwords.version()
    assert two not in ('', one)
    passwords.generate()
    assert passwords.version() not in ('', one, two)
    passwords.remove()
    assert passwords.version() == ''


def test_remove() -> None:
    store = MemoryStore()
    passwords = PasswordStore(store, iterations=ITERATIONS)
    assert passwords.remove() is False
    passwords.set(PASSWORD)
    assert passwords.is_set()
    assert passwords.remove() is True
    assert store.data == {}
    assert not passwords.is_set()
    assert not passwords.verify(PASSWORD)
    assert passwords.remove() is False


def test_a_stored_value_that_is_not_json_counts_as_no_password() -> None:
    store = MemoryStore()
    store.set_store(PASSWORD_KEY, 'not json')
    passwords = PasswordStore(store, iterations=ITERATIONS)
    assert not passwords.is_set()
    assert passwords.version() == ''
    assert not passwords.verify('not json')
    store.set_store(PASSWORD_KEY, json.dumps({'scheme': 'plain', 'password': PASSWORD}))
    assert not passwords.is_set()
    assert not passwords.verify(PASSWORD)


@pytest.mark.parametrize('value', ['[]', 'null', '"text"', '5'])
def test_a_stored_value_that_is_json_but_no_object_counts_as_no_password(value: str) -> None:
    store = MemoryStore()
    store.set_store(PASSWORD_KEY, value)
    passwords = PasswordStore(store, iterations=ITERATIONS)
    assert not passwords.is_set()
    assert passwords.version() == ''
    assert not passwords.verify(PASSWORD)


# -- Sessions -----------------------------------------------------------------------
def test_open_and_find() -> None:
    clock = Clock()
    sessions = Sessions(lambda: 600.0, clock=clock)
    one = sessions.open('v1')
    two = sessions.open('v1')
    assert len({one.token, one.csrf, two.token, two.csrf}) == 4
    assert len(one.token) >= 32 and len(one.csrf) >= 32
    assert one.expires == clock.now + 600.0
    assert one.password_version == 'v1'
    assert sessions.find(one.token, 'v1') == one
    assert sessions.find(two.token, 'v1') == two
    assert sessions.count() == 2


@pytest.mark.parametrize('token', [None, '', 'no-such-token'])
def test_find_without_a_known_token(token: Optional[str]) -> None:
    sessions = Sessions(lambda: 600.0, clock=Clock())
    opened = sessions.open('v1')
    assert sessions.find(token, 'v1') is None
    assert sessions.find(opened.csrf, 'v1') is None     # the CSRF token is no session token
    assert sessions.count() == 1


def test_a_session_expires() -> None:
    clock = Clock()
    sessions = Sessions(lambda: 600.0, clock=clock)
    session = sessions.open('v1')
    clock.now += 599.9
    assert sessions.find(session.token, 'v1') == session
    assert sessions.count() == 1
    clock.now += 0.1                           # exactly at its end
    assert sessions.count() == 0
    assert sessions.find(session.token, 'v1') is None
    clock.now -= 10                            # gone for good, even if the clock goes back
    assert sessions.find(session.token, 'v1') is None


def test_the_timeout_is_read_at_each_login() -> None:
    clock = Clock()
    timeout = [600.0]
    sessions = Sessions(lambda: timeout[0], clock=clock)
    short = sessions.open('v1')
    timeout[0] = 3600.0
    long = sessions.open('v1')
    assert long.expires - short.expires == 3000.0
    clock.now += 1000
    assert sessions.find(short.token, 'v1') is None
    assert sessions.find(long.token, 'v1') == long


def test_a_session_of_another_password_ends() -> None:
    sessions = Sessions(lambda: 600.0, clock=Clock())
    session = sessions.open('v1')
    other = sessions.open('v1')
    assert sessions.find(session.token, 'v2') is None
    assert sessions.find(session.token, 'v1') is None   # ended, not only hidden
    assert sessions.find(other.token, 'v1') == other
    assert sessions.count() == 1


def test_close_and_close_all() -> None:
    sessions = Sessions(lambda: 600.0, clock=Clock())
    one, two, three = sessions.open('v'), sessions.open('v'), sessions.open('v')
    sessions.close(two.token)
    sessions.close('not-a-session')            # no error
    assert sessions.find(two.token, 'v') is None
    assert sessions.find(one.token, 'v') == one
    assert sessions.count() == 2
    sessions.close_all()
    assert sessions.count() == 0
    assert sessions.find(one.token, 'v') is None
    assert sessions.find(three.token, 'v') is None


def test_count_leaves_out_expired_sessions() -> None:
    clock = Clock()
    sessions = Sessions(lambda: 100.0, clock=clock)
    sessions.open('v')
    clock.now += 60
    late = sessions.open('v')
    assert sessions.count() == 2
    clock.now += 50
    assert sessions.count() == 1
    assert sessions.find(late.token, 'v') == late


# -- same_token ---------------------------------------------------------------------
def test_same_token() -> None:
    assert same_token('abc-DEF_123', 'abc-DEF_123')
    assert not same_token('abc-DEF_124', 'abc-DEF_123')
    assert not same_token('abc-DEF_12', 'abc-DEF_123')
    assert not same_token('abc-DEF_1234', 'abc-DEF_123')
    assert not same_token(None, 'abc')
    assert not same_token('', 'abc')
    assert not same_token('', '')              # an empty token never matches
    assert not same_token('\u00e9t\u00e9', 'abc')   # no error on text that is not ASCII
    assert same_token('\u00e9t\u00e9', '\u00e9t\u00e9')


# -- AuthBrake ----------------------------------------------------------------------
def fail_in_time(brake: AuthBrake, clock: Clock, address: str, times: int) -> List[float]:
    """Fail `times` from `address`, each once its wait is over; the waits."""
    waits = []
    for _ in range(times):
        assert brake.locked_for(address) == 0.0
        waits.append(brake.failed(address))
        assert brake.locked_for(address) == pytest.approx(waits[-1])
        clock.now += waits[-1]
    return waits


def test_each_failure_makes_its_source_wait_twice_as_long_up_to_the_most() -> None:
    clock = Clock()
    brake = AuthBrake(clock=clock)
    assert fail_in_time(brake, clock, '192.0.2.1', 5) == [1.0, 2.0, 4.0, 8.0, 8.0]


def test_the_brake_never_sleeps() -> None:
    brake = AuthBrake(clock=Clock())
    began = time.monotonic()
    assert [brake.failed('192.0.2.1') for _ in range(3)] == [1.0, 2.0, 4.0]
    assert time.monotonic() - began < 0.5  # the caller answers 429 instead of waiting


def test_a_source_must_wait_out_its_time() -> None:
    clock = Clock()
    brake = AuthBrake(clock=clock)
    brake.failed('192.0.2.1')
    clock.now += 0.4
    assert brake.locked_for('192.0.2.1') == pytest.approx(0.6)
    clock.now += 0.6
    assert brake.locked_for('192.0.2.1') == 0.0


def test_the_brake_counts_each_source_apart() -> None:
    clock = Clock()
    brake = AuthBrake(clock=clock)
    assert brake.failed('192.0.2.1') == 1.0
    assert brake.failed('192.0.2.2') == 1.0
    assert brake.failed('2001:db8:0:1::1') == 1.0
    clock.now += 1
    assert brake.failed('192.0.2.1') == 2.0
    assert brake.failed('2001:db8:0:2::1') == 1.0   # another /64


@pytest.mark.parametrize('first, other', [
    ('2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:fffe'),
    ('2001:db8:1:2::1', '2001:DB8:1:2::99'),
    ('fe80::1%eth0', 'fe80::2%eth1'),
    ('192.0.2.7', '::ffff:192.0.2.7')])
def test_one_source_for_an_ipv6_64_and_for_an_ipv4_mapped_address(
        first: str, other: str) -> None:
    assert source_of(first) == source_of(other)
    clock = Clock()
    brake = AuthBrake(lock_after=3, clock=clock)
    fail_in_time(brake, clock, first, 2)
    brake.failed(other)                          # the third from the same source: locked
    assert brake.locked_for(first) == pytest.approx(300.0)


def test_a_success_clears_the_source() -> None:
    clock = Clock()
    brake = AuthBrake(clock=clock)
    for address in ('192.0.2.1', '192.0.2.2'):
        fail_in_time(brake, clock, address, 2)
    brake.succeeded('192.0.2.1')
    brake.succeeded('192.0.2.9')                     # never failed: no error
    assert brake.failed('192.0.2.1') == 1.0
    assert brake.failed('192.0.2.2') == 4.0


def test_the_brake_locks_a_source_after_too_many_failures() -> None:
    clock = Clock()
    brake = AuthBrake(lock_after=4, lock_s=300.0, clock=clock)
    assert fail_in_time(brake, clock, '192.0.2.1', 3) == [1.0, 2.0, 4.0]
    assert brake.failed('192.0.2.1') == 300.0
    assert brake.locked_for('192.0.2.1') == pytest.approx(300.0)
    assert brake.locked_for('192.0.2.2') == 0.0      # only that source
    clock.now += 299
    assert brake.locked_for('192.0.2.1') == pytest.approx(1.0)
    clock.now += 1                                   # lock_s after its last failure
    assert brake.locked_for('192.0.2.1') == 0.0
    assert brake.failed('192.0.2.1') == 1.0          # and it starts again from the first


def test_old_failures_are_forgotten_after_lock_s() -> None:
    clock = Clock()
    brake = AuthBrake(lock_after=10, lock_s=300.0, clock=clock)
    fail_in_time(brake, clock, '192.0.2.1', 3)
    clock.now += 301
    assert brake.failed('192.0.2.1') == 1.0


def test_the_brake_settings() -> None:
    clock = Clock()
    brake = AuthBrake(first_s=0.5, max_s=3.0, lock_after=6, lock_s=60.0, clock=clock)
    assert fail_in_time(brake, clock, 'h', 5) == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert brake.failed('h') == 60.0


def test_new_addresses_do_not_push_a_locked_source_out_of_a_full_table() -> None:
    clock = Clock()
    brake = AuthBrake(lock_after=2, lock_s=300.0, max_sources=3, clock=clock)
    fail_in_time(brake, clock, '192.0.2.1', 1)
    brake.failed('192.0.2.1')
    for n in range(100):                             # rotating addresses, each once
        address = '198.51.100.%d' % n
        if brake.locked_for(address) == 0.0:
            brake.failed(address)
        clock.now += 1
    assert brake.locked_for('192.0.2.1') > 0         # still locked


def test_new_sources_count_as_one_while_every_known_one_must_wait() -> None:
    clock = Clock()
    brake = AuthBrake(lock_after=2, lock_s=300.0, max_sources=2, clock=clock)
    for address in ('192.0.2.1', '192.0.2.2'):     # a full table of locked sources
        fail_in_time(brake, clock, address, 1)
        brake.failed(address)
    assert brake.locked_for('203.0.113.1') == 0.0
    brake.failed('203.0.113.1')
    assert brake.locked_for('203.0.113.2') == pytest.approx(1.0)   # the same count
    clock.now += 1
    assert brake.locked_for('203.0.113.2') == 0.0
    brake.failed('203.0.113.2')
    assert brake.locked_for('203.0.113.3') == pytest.approx(300.0)
    clock.now += 301                                 # every lock is over: room again
    assert brake.locked_for('203.0.113.4') == 0.0
    brake.failed('203.0.113.4')
    assert brake.locked_for('192.0.2.1') == 0.0


def test_the_table_stays_bounded() -> None:
    clock = Clock()
    brake = AuthBrake(max_sources=50, clock=clock)
    for n in range(1000):
        brake.failed('2001:db8:%x::1' % n)
        clock.now += 0.1
    assert len(brake._failures) <= 51


def test_one_budget_of_failures_for_every_source_together() -> None:
    clock = Clock()
    brake = AuthBrake(budget=5, window_s=60.0, clock=clock)
    for n in range(5):                               # five sources, each failing once
        assert brake.locked_for('2001:db8:%x::1' % n) == 0.0
        brake.failed('2001:db8:%x::1' % n)
        clock.now += 1
    # spent: a new source and an old one whose own wait is over must wait for the window
    assert brake.locked_for('203.0.113.9') == pytest.approx(55.0)
    assert brake.locked_for('2001:db8:4::1') == pytest.approx(55.0)
    clock.now += 55                                  # the first failure leaves the window
    assert brake.locked_for('203.0.113.9') == 0.0
    brake.failed('203.0.113.9')
    assert brake.locked_for('198.51.100.1') == pytest.approx(1.0)   # the second's turn


def test_the_default_budget_is_100_failures_in_10_minutes() -> None:
    clock = Clock()
    brake = AuthBrake(clock=clock)
    for n in range(100):                             # a new /64 for each guess, 5 s apart
        assert brake.locked_for('2001:db8:%x::1' % n) == 0.0
        brake.failed('2001:db8:%x::1' % n)
        clock.now += 5
    assert brake.locked_for('2001:db8:ffff::1') == pytest.approx(100.0)
    clock.now += 100
    assert brake.locked_for('2001:db8:ffff::1') == 0.0
