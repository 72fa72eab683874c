// rgwbench panel: the live view of a run, starting a run from its plan, aborting it.
// Every state-changing request carries the session's CSRF token from the page.
(function () {
  'use strict';
  var csrf = document.querySelector('meta[name="csrf-token"]').content;
  var $ = function (id) { return document.getElementById(id); };
  var history = [];
  var shownRun = $('live') && !$('live').hidden ? $('live-run').textContent : null;
  var pollTimer = null;

  function post(path, body) {
    return fetch(path, {
      method: 'POST', credentials: 'same-origin',
      headers: {'Content-Type': 'application/json', 'X-CSRF-Token': csrf},
      body: JSON.stringify(body || {})
    }).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) { throw new Error(data.error || ('HTTP ' + r.status)); }
        return data;
      });
    });
  }

  function drawSpark() {
    var svg = $('live-chart');
    if (!svg) { return; }
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    if (history.length < 2) { return; }
    var top = Math.max.apply(null, history) || 1;
    var step = 300 / (history.length - 1);
    var points = history.map(function (v, i) {
      return (i * step).toFixed(1) + ',' + (58 - v / top * 54).toFixed(1);
    }).join(' ');
    var line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
    line.setAttribute('points', points);
    svg.appendChild(line);
  }

  function liveText(live) {
    if (!live) { return 'no figures yet'; }
    return live.ops_per_s.toFixed(1) + ' ops/s, ' + live.mib_per_s.toFixed(2) +
      ' MiB/s (' + live.phase + ')';
  }

  function showRun(run) {
    var box = $('live');
    if (!box) { return; }
    if (!run) {
      if (shownRun) {
        // The run ended: the page shows its outcome after a reload.
        $('live-message').textContent = 'run ' + shownRun + ' ended';
        shownRun = null;
        window.setTimeout(function () { window.location.reload(); }, 1500);
      }
      return;
    }
    if (shownRun !== run.run_id) { history = []; }
    shownRun = run.run_id;
    box.hidden = false;
    $('live-run').textContent = run.run_id;
    $('live-run').href = '/runs/' + encodeURIComponent(run.run_id);
    $('live-progress').value = run.fraction || 0;
    $('live-message').textContent = run.progress || '';
    $('live-throughput').textContent = liveText(run.live);
    if (run.live) {
      history.push(run.live.ops_per_s);
      if (history.length > 100) { history.shift(); }
    }
    drawSpark();
  }

  function poll() {
    fetch('/api/status', {credentials: 'same-origin'}).then(function (r) {
      if (r.status === 401) { window.location.href = '/login'; return null; }
      return r.json();
    }).then(function (data) {
      if (data) { showRun(data.active_run); }
    }).catch(function () { /* the next poll tries again */ })
      .then(function () { pollTimer = window.setTimeout(poll, 2000); });
  }

  function pollSoon() {
    if (pollTimer) { window.clearTimeout(pollTimer); }
    pollTimer = window.setTimeout(poll, 200);
  }

  // The form's fields, each the override of `ceph rgwbench run` of its name (sent as
  // typed: the module checks them as it checks the CLI's).
  var OVERRIDES = ['duration', 'warmup', 'repeats', 'rate', 'rates', 'objects',
                   'multipart_threshold', 'part_size', 'range', 'processes',
                   'payload_signing'];

  function overrides() {
    var found = {};
    OVERRIDES.forEach(function (name) {
      var value = $(name).value.trim();
      if (value !== '') { found[name] = value; }
    });
    return found;
  }

  var showPlan = $('show-plan');
  if (showPlan) {
    var confirmBox = $('confirm');
    var startRun = $('start-run');
    var profile = $('profile');
    var updateStart = function () { startRun.disabled = !confirmBox.checked || $('plan').hidden; };
    var planChanged = function () {
      $('plan').hidden = true;
      $('confirm-line').hidden = true;
      confirmBox.checked = false;
      updateStart();
    };
    profile.addEventListener('change', planChanged);
    OVERRIDES.forEach(function (name) {
      $(name).addEventListener('input', planChanged);
      $(name).addEventListener('change', planChanged);
    });
    showPlan.addEventListener('click', function () {
      $('start-error').textContent = '';
      var query = new URLSearchParams(overrides());
      query.set('profile', profile.value);
      fetch('/api/plan?' + query.toString(), {credentials: 'same-origin'})
        .then(function (r) { return r.json().then(function (d) { return [r.ok, d]; }); })
        .then(function (res) {
          if (!res[0]) { throw new Error(res[1].error); }
          $('plan').textContent = res[1].text;
          $('plan').hidden = false;
          $('confirm-line').hidden = false;
          updateStart();
        })
        .catch(function (err) { $('start-error').textContent = err.message; });
    });
    confirmBox.addEventListener('change', updateStart);
    startRun.addEventListener('click', function () {
      startRun.disabled = true;
      $('start-error').textContent = '';
      var body = overrides();
      body.profile = profile.value;
      body.confirm = 'yes';
      post('/api/runs', body).then(function (data) {
        $('plan').hidden = true;
        $('confirm-line').hidden = true;
        confirmBox.checked = false;
        $('start-error').textContent = '';
        showRun({run_id: data.run_id, progress: 'starting', fraction: 0, live: null});
        pollSoon();
      }).catch(function (err) {
        $('start-error').textContent = err.message;
        updateStart();
      });
    });
  }

  var abort = $('abort');
  if (abort) {
    abort.addEventListener('click', function () { $('abort-confirm').hidden = false; });
    $('abort-confirm').addEventListener('click', function () {
      $('abort-confirm').hidden = true;
      post('/api/abort').then(function () {
        $('live-message').textContent = 'aborting: putting every setting back';
        pollSoon();
      }).catch(function (err) { $('abort-error').textContent = err.message; });
    });
  }

  if ($('live')) { poll(); }
}());
