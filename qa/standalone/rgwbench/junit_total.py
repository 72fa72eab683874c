#!/usr/bin/env python3
"""Print one closing line for all test suites: `total: N passed, N failed, N skipped`."""
import glob
import os
import sys
import xml.etree.ElementTree as ET


def main(folder: str) -> int:
    passed = failed = skipped = 0
    for path in sorted(glob.glob(os.path.join(folder, '*.xml'))):
        for suite in ET.parse(path).getroot().iter('testsuite'):
            tests = int(suite.get('tests', 0))
            bad = int(suite.get('failures', 0)) + int(suite.get('errors', 0))
            skip = int(suite.get('skipped', 0))
            passed += tests - bad - skip
            failed += bad
            skipped += skip
    print('total: %d passed, %d failed, %d skipped' % (passed, failed, skipped))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.tox/junit'))
