"""The panel's app without a session and while logging in: the login form and its token,
passwords and the brake, where `next` may lead, sessions ending, and the security headers
and CSP of every answer. (`h` is conftest's fixture: a panel_harness.Harness.)"""
import base64
import hashlib
import re
from typing import Dict, List, Optional

import pytest
from panel_harness import (PASSWORD, REMOTE, RUN_ID, TIMEOUT_S, Harness, Login, body,
                           check_security_headers, cookie_value, data, header, hidden,
                           set_cookies)

from rgwbench.errors import Busy
from rgwbench.panel.app import LOGIN_COOKIE, SESSION_COOKIE, Response


# -- without a session --------------------------------------------------------------
@pytest.mark.parametrize('path', ['/', '/runs/%s' % RUN_ID, '/no/such/page'])
def test_pages_without_a_session_answer_401_with_the_login_form(h: Harness, path: str) -> None:
    response = h.request('GET', path)
    assert response.status == 401
    assert response.content_type.startswith('text/html')
    page = body(response)
    assert '<form id="login" method="post" action="/login">' in page
    assert 'name="password" type="password"' in page
    assert hidden(page, 'next') == path
    assert hidden(page, 'login_token') == cookie_value(response, LOGIN_COOKIE)
    assert SESSION_COOKIE not in set_cookies(response)
    assert h.backend.calls == []


@pytest.mark.parametrize('session', [False, True])
def test_the_browsers_icon_request_leaves_the_login_forms_cookie(
        h: Harness, session: bool) -> None:
    # A browser asks for /favicon.ico after each page: answered with a login page, its
    # new cookie replaced the one of the form on screen, and every login "expired".
    login = h.login() if session else None
    page = h.request('GET', '/')
    icon = h.request('GET', '/favicon.ico',
                     cookies={SESSION_COOKIE: login.token} if login else None)
    assert icon.status == 404 and icon.body == b'' and set_cookies(icon) == {}
    check_security_headers(icon)
    if not session:
        token = cookie_value(page, LOGIN_COOKIE)
        answer = h.request('POST', '/login', form={'login_token': token, 'password': PASSWORD,
                                                   'next': '/'},
                           cookies={LOGIN_COOKIE: token})
        assert answer.status == 303


@pytest.mark.parametrize('method, path', [
    ('GET', '/api/status'), ('GET', '/api/runs'), ('GET', '/api/plan'),
    ('GET', '/runs/%s.json' % RUN_ID), ('GET', '/runs/%s.csv' % RUN_ID),
    ('GET', '/static/panel.js'), ('GET', '/static/panel.css'), ('HEAD', '/'),
    ('POST', '/api/runs'), ('POST', '/api/abort'), ('POST', '/logout'), ('DELETE', '/'),
])
def test_data_and_actions_without_a_session_answer_401(h: Harness, method: str,
                                                       path: str) -> None:
    for cookies in ({}, {SESSION_COOKIE: 'made-up'}, {SESSION_COOKIE: ''}):
        response = h.request(method, path, query={'profile': 'quick'},
                             form={'profile': 'quick', 'csrf_token': 'made-up'},
                             headers={'x-csrf-token': 'made-up'}, cookies=cookies)
        assert response.status == 401
        assert data(response) == {'error': 'log in first'}
    assert h.backend.calls == []


def test_a_csrf_token_is_no_session_token(h: Harness) -> None:
    login = h.login()
    calls = len(h.backend.calls)
    response = h.request('GET', '/api/status', cookies={SESSION_COOKIE: login.csrf})
    assert response.status == 401
    assert len(h.backend.calls) == calls


# -- logging in ---------------------------------------------------------------------
@pytest.mark.parametrize('secure', [False, True])
def test_the_login_page_sets_its_token_in_a_cookie_and_the_form(h: Harness,
                                                                secure: bool) -> None:
    response = h.request('GET', '/login', secure=secure)
    assert response.status == 200
    assert response.content_type == 'text/html; charset=utf-8'
    cookie = set_cookies(response)[LOGIN_COOKIE]
    token = cookie[0]
    assert len(token) >= 24
    assert {'Path=/', 'HttpOnly', 'SameSite=Strict'} <= set(cookie[1:])
    assert ('Secure' in cookie[1:]) is secure
    page = body(response)
    assert hidden(page, 'login_token') == token
    assert hidden(page, 'next') == '/'
    assert 'No password is set yet' not in page
    assert cookie_value(h.request('GET', '/login'), LOGIN_COOKIE) != token
    assert h.backend.calls == []


def test_the_login_page_says_when_no_password_is_set(h: Harness) -> None:
    h.passwords.remove()
    assert 'password generate' in body(h.request('GET', '/login'))
    response = h.post_login('')
    assert response.status == 401
    assert SESSION_COOKIE not in set_cookies(response)


def test_the_login_page_escapes_next(h: Harness) -> None:
    response = h.request('GET', '/login', query={'next': '/"><script>alert(1)</script>'})
    page = body(response)
    assert '<script>' not in page
    assert hidden(page, 'next') == '/"><script>alert(1)</script>'


@pytest.mark.parametrize('form_token, cookie_token', [
    (None, 'T' * 32), ('T' * 32, None), (None, None), ('', ''), ('T' * 32, 'U' * 32),
    ('T' * 31, 'T' * 32),
])
def test_a_login_without_its_forms_token_is_refused(h: Harness, form_token: Optional[str],
                                                    cookie_token: Optional[str]) -> None:
    form = {'password': PASSWORD, 'next': '/'}
    if form_token is not None:
        form['login_token'] = form_token
    response = h.request('POST', '/login', form=form,
                         cookies={} if cookie_token is None else {LOGIN_COOKIE: cookie_token})
    assert response.status == 403
    page = body(response)
    assert 'The login form expired' in page
    assert hidden(page, 'login_token') == cookie_value(response, LOGIN_COOKIE)   # a new one
    assert SESSION_COOKIE not in set_cookies(response)
    assert h.sessions.count() == 0
    assert h.brake.locked_for(REMOTE) == 0.0  # no password was checked


def test_a_wrong_password_is_refused_and_braked(h: Harness) -> None:
    response = h.post_login('wrong password', next_path='/runs/%s' % RUN_ID)
    assert response.status == 401
    assert response.content_type.startswith('text/html')
    page = body(response)
    assert 'Wrong password.' in page
    assert hidden(page, 'next') == '/runs/%s' % RUN_ID
    assert hidden(page, 'login_token') == cookie_value(response, LOGIN_COOKIE)
    assert SESSION_COOKIE not in set_cookies(response)
    # Its source waits 1 s before its next try: one before that is refused unchecked.
    early = h.post_login(PASSWORD)
    assert early.status == 429 and int(header(early, 'Retry-After')) in (1, 2)
    assert 'Too many wrong passwords' in body(early)
    h.clock.now += 1
    assert h.post_login('').status == 401
    assert h.brake.locked_for(REMOTE) == 2.0
    h.clock.now += 2
    assert h.post_login(PASSWORD + ' ').status == 401
    assert h.brake.locked_for(REMOTE) == 4.0
    assert h.post_login('wrong', remote='192.0.2.51').status == 401   # its own count
    assert h.brake.locked_for('192.0.2.51') == 1.0
    assert h.sessions.count() == 0
    assert h.backend.calls == []


@pytest.mark.parametrize('secure', [False, True])
def test_the_right_password_opens_a_session(h: Harness, secure: bool) -> None:
    assert h.post_login('wrong password', secure=secure).status == 401
    h.clock.now += 1
    response = h.post_login(PASSWORD, next_path='/runs/%s' % RUN_ID, secure=secure)
    assert response.status == 303
    assert header(response, 'Location') == '/runs/%s' % RUN_ID
    cookies = set_cookies(response)
    session = cookies[SESSION_COOKIE]
    assert len(session[0]) >= 32
    assert {'Path=/', 'HttpOnly', 'SameSite=Strict', 'Max-Age=%d' % TIMEOUT_S} \
        <= set(session[1:])
    assert ('Secure' in session[1:]) is secure
    assert cookies[LOGIN_COOKIE][0] == '' and 'Max-Age=0' in cookies[LOGIN_COOKIE]
    assert h.sessions.count() == 1
    assert h.get('/api/status', Login(session[0], '')).status == 200
    # the success cleared the address's failures
    assert h.post_login('wrong password', secure=secure).status == 401
    assert h.brake.locked_for(REMOTE) == 1.0


@pytest.mark.parametrize('target', [
    '//evil.example', '//evil.example/runs', 'https://evil', 'https://evil.example/x',
    'http:evil.example', '/\\evil.example', '\\\\evil.example', 'javascript:alert(1)',
    'evil.example', '', '///evil.example',
])
def test_next_stays_on_the_panel(h: Harness, target: str) -> None:
    response = h.post_login(PASSWORD, next_path=target)
    assert response.status == 303
    assert header(response, 'Location') == '/'
    page = body(h.request('GET', '/login', query={'next': target}))
    assert hidden(page, 'next') == '/'


@pytest.mark.parametrize('target', ['/', '/runs/%s' % RUN_ID, '/runs/x?y=1#z'])
def test_next_of_the_panel_is_kept(h: Harness, target: str) -> None:
    assert header(h.post_login(PASSWORD, next_path=target), 'Location') == target


@pytest.mark.parametrize('target', ['/\t/evil.example', '/\n/evil.example', '/\r/evil.example'])
def test_next_with_a_control_character_stays_on_the_panel(h: Harness, target: str) -> None:
    location = header(h.post_login(PASSWORD, next_path=target), 'Location')
    assert not re.sub(r'[\t\r\n]', '', location).startswith('//')
    assert not re.search(r'[\x00-\x1f]', location)


def test_too_many_wrong_passwords_lock_the_address(h: Harness) -> None:
    for wait in (1.0, 2.0, 4.0):
        assert h.post_login('wrong password').status == 401
        h.clock.now += wait
    assert h.post_login('wrong password').status == 401
    h.clock.now += 10
    response = h.post_login(PASSWORD)          # even the right one: it is not checked
    assert response.status == 429
    assert 0 < int(header(response, 'Retry-After')) <= 300
    assert int(header(response, 'Retry-After')) >= 290
    assert 'Too many wrong passwords' in body(response)
    assert SESSION_COOKIE not in set_cookies(response)
    assert h.sessions.count() == 0
    assert h.post_login(PASSWORD, remote='192.0.2.51').status == 303   # others can log in
    h.clock.now += 290
    assert h.post_login(PASSWORD).status == 303    # lock_s after the last failure


def test_many_sources_share_one_budget_of_wrong_passwords(h: Harness) -> None:
    # Each guess from a new /64 passes every source's own brake; 100 within 10 minutes
    # spend the budget of all, and then even the right password is not checked.
    for n in range(100):
        assert h.post_login('guess %d' % n, remote='2001:db8:%x::1' % n).status == 401
        h.clock.now += 1
    response = h.post_login(PASSWORD, remote='192.0.2.99')
    assert response.status == 429
    assert int(header(response, 'Retry-After')) == 501
    assert h.sessions.count() == 0
    h.clock.now += 501
    assert h.post_login(PASSWORD, remote='192.0.2.99').status == 303


def test_changing_the_password_ends_the_sessions(h: Harness) -> None:
    login = h.login()
    assert h.get('/api/status', login).status == 200
    h.passwords.set('a new password')
    assert h.get('/api/status', login).status == 401
    assert h.get('/', login).status == 401
    assert h.post_login(PASSWORD).status == 401
    h.clock.now += 1  # the wait after a wrong password
    login = h.login('a new password')
    assert h.get('/api/status', login).status == 200
    h.passwords.set('a new password')          # the same one again ends them too
    assert h.get('/api/status', login).status == 401
    h.passwords.generate()
    assert h.post_login('a new password').status == 401


def test_removing_the_password_ends_the_sessions(h: Harness) -> None:
    login = h.login()
    h.passwords.remove()
    assert h.get('/api/status', login).status == 401
    assert h.post_login(PASSWORD).status == 401


def test_a_session_ends_after_its_timeout(h: Harness) -> None:
    login = h.login()
    h.clock.now += TIMEOUT_S - 1
    assert h.get('/api/status', login).status == 200
    h.clock.now += 1
    response = h.get('/', login)
    assert response.status == 401
    assert '<form id="login"' in body(response)


def test_logout_ends_the_session(h: Harness) -> None:
    login, other = h.login(), h.login()
    refused = h.request('POST', '/logout', cookies={SESSION_COOKIE: login.token})
    assert refused.status == 403                # without its CSRF token
    assert h.get('/api/status', login).status == 200
    response = h.request('POST', '/logout', form={'csrf_token': login.csrf},
                         cookies={SESSION_COOKIE: login.token})
    assert response.status == 303
    assert header(response, 'Location') == '/login'
    cookie = set_cookies(response)[SESSION_COOKIE]
    assert cookie[0] == '' and 'Max-Age=0' in cookie
    assert h.get('/api/status', login).status == 401
    assert h.get('/', login).status == 401
    assert h.get('/api/status', other).status == 200
    assert h.sessions.count() == 1


# -- every answer -------------------------------------------------------------------
def test_security_headers_on_every_answer(h: Harness) -> None:
    login = h.login()
    h.backend.fail['start_run'] = Busy('busy')
    answers = [h.request('GET', '/'), h.request('GET', '/api/status'), h.post_login('wrong'),
               h.post_login(PASSWORD), h.get('/', login), h.get('/runs/%s' % RUN_ID, login),
               h.get('/runs/%s.json' % RUN_ID, login), h.get('/runs/%s.csv' % RUN_ID, login),
               h.get('/static/panel.js', login), h.get('/nothing', login),
               h.post('/api/runs', login, form={'confirm': 'yes'}, csrf=login.csrf),
               h.post('/api/runs', login),
               h.post('/logout', login, csrf=login.csrf)]
    # 429: the right password just after a wrong one, before its wait is over
    assert sorted({a.status for a in answers}) == [200, 303, 401, 403, 404, 409, 429]
    for answer in answers:
        check_security_headers(answer)


def csp_directives(response: Response) -> Dict[str, List[str]]:
    csp = header(response, 'Content-Security-Policy')
    return {d.split()[0]: d.split()[1:] for d in csp.split(';') if d.strip()}


def test_the_login_pages_csp_allows_its_inline_style_by_hash(h: Harness) -> None:
    for response in (h.request('GET', '/login'), h.request('GET', '/'),
                     h.post_login('wrong password'), h.request('POST', '/login')):
        style = re.search(r'<style>(.*?)</style>', body(response), re.S)
        assert style
        digest = "'sha256-%s'" % base64.b64encode(
            hashlib.sha256(style.group(1).encode('utf-8')).digest()).decode('ascii')
        assert csp_directives(response)['style-src'] == [digest]
        assert csp_directives(response)['script-src'] == ["'self'"]
    h.clock.now += 1  # the wait after a wrong password
    login = h.login()
    for response in (h.get('/', login), h.get('/api/status', login)):
        assert csp_directives(response)['style-src'] == ["'self'"]


def test_pages_with_a_session_have_no_inline_script_or_style(h: Harness) -> None:
    login = h.login()
    for path in ('/', '/runs/%s' % RUN_ID, '/nothing'):
        page = body(h.get(path, login))
        assert '<style' not in page
        assert re.findall(r'<script[^>]*>', page) == ['<script src="/static/panel.js" defer>']
        assert not re.search(r'<[^>]*\son[a-z]+\s*=', page, re.I)     # no event handler
