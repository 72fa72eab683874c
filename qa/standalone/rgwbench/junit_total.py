#!/usr/bin/env python3
"""Print the tests that failed, then one closing line for all test suites:
`total: N passed, N failed, N skipped`.

CI keeps only the end of what ran, so the names of the failed tests come last,
each with the first line of its message, after those of the tests that failed
once and were run again (the reruns-*.txt files beside the reports).
"""
import glob
import os
import sys
import xml.etree.ElementTree as ET


def main(folder: str) -> int:
    passed = failed = skipped = 0
    failures = []
    for path in sorted(glob.glob(os.path.join(folder, '*.xml'))):
        suite_file = os.path.basename(path)[:-len('.xml')]
        root = ET.parse(path).getroot()
        for suite in root.iter('testsuite'):
            tests = int(suite.get('tests', 0))
            bad = int(suite.get('failures', 0)) + int(suite.get('errors', 0))
            skip = int(suite.get('skipped', 0))
            passed += tests - bad - skip
            failed += bad
            skipped += skip
        for case in root.iter('testcase'):
            for outcome in ('failure', 'error'):
                found = case.find(outcome)
                if found is None:
                    continue
                message = (found.get('message') or found.text or '').strip()
                failures.append('%s %s %s::%s: %s' % (
                    outcome.upper(), suite_file, case.get('classname', ''),
                    case.get('name', ''), message.splitlines()[0][:300] if message else ''))
    for path in sorted(glob.glob(os.path.join(folder, 'reruns-*.txt'))):
        shard = os.path.basename(path)[len('reruns-'):-len('.txt')]
        with open(path, errors='replace') as f:
            for line in f:
                print('RERUN %s %s' % (shard, line.rstrip()))
    for line in failures:
        print(line)
    print('total: %d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.tox/junit'))
