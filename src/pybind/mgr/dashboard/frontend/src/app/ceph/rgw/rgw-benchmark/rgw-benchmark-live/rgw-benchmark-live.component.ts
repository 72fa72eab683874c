import { Component, EventEmitter, Input, OnChanges, Output, SimpleChanges } from '@angular/core';

import { ChartPoint } from '~/app/shared/models/area-chart-point';
import { BenchmarkLive } from '../models/rgw-benchmark.model';

/** How many seconds of live throughput the chart keeps. */
const KEPT_POINTS = 300;

@Component({
  selector: 'cd-rgw-benchmark-live',
  templateUrl: './rgw-benchmark-live.component.html',
  styleUrls: ['./rgw-benchmark-live.component.scss']
})
export class RgwBenchmarkLiveComponent implements OnChanges {
  @Input() live: BenchmarkLive;
  @Input() canAbort = false;
  @Input() aborting = false;
  @Output() abort = new EventEmitter<void>();

  confirming = false;
  points: ChartPoint[] = [];

  ngOnChanges(changes: SimpleChanges) {
    if (changes['live']) {
      const figures = this.live?.live;
      if (figures && figures.ops_per_s !== undefined && figures.ops_per_s !== null) {
        const values: Record<string, number> = { 'ops/s': Number(figures.ops_per_s) };
        this.points = [...this.points, { timestamp: new Date(), values }].slice(-KEPT_POINTS);
      }
    }
  }

  get percent(): number {
    return Math.round(Math.min(1, Math.max(0, this.live?.fraction || 0)) * 100);
  }

  askAbort() {
    this.confirming = true;
  }

  cancelAbort() {
    this.confirming = false;
  }

  confirmAbort() {
    this.confirming = false;
    this.abort.emit();
  }
}
