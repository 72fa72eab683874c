import { Component, Input } from '@angular/core';

import { BenchmarkFinding } from '../models/rgw-benchmark.model';

/** The order rgwbench ranks its findings in: what refuses a run first. */
const LEVELS = ['refuse', 'warn', 'info'];

@Component({
  selector: 'cd-rgw-benchmark-findings',
  templateUrl: './rgw-benchmark-findings.component.html'
})
export class RgwBenchmarkFindingsComponent {
  ordered: BenchmarkFinding[] = [];

  @Input()
  set findings(value: BenchmarkFinding[] | null) {
    const rank = (f: BenchmarkFinding) => {
      const found = LEVELS.indexOf(f.level);
      return found < 0 ? LEVELS.length : found;
    };
    this.ordered = [...(value || [])].sort((a, b) => rank(a) - rank(b));
  }

  alertType(finding: BenchmarkFinding): string {
    return finding.level === 'refuse' ? 'danger' : finding.level === 'warn' ? 'warning' : 'info';
  }

  where(finding: BenchmarkFinding): string {
    return [finding.variant, finding.workload].filter((part) => !!part).join(' / ');
  }
}
