import { Component, OnDestroy, OnInit } from '@angular/core';
import { ActivatedRoute } from '@angular/router';

import { Subscription, forkJoin, timer } from 'rxjs';
import { switchMap } from 'rxjs/operators';

import { RgwBenchmarkService } from '~/app/shared/api/rgw-benchmark.service';
import { ChartPoint } from '~/app/shared/models/area-chart-point';
import { Permission } from '~/app/shared/models/permissions';
import { AuthStorageService } from '~/app/shared/services/auth-storage.service';
import {
  BenchmarkComparisonRow,
  BenchmarkLive,
  BenchmarkRun,
  BenchmarkWorkloadResult,
  COMPARISON_FIGURES,
  ComparisonFigure
} from '../models/rgw-benchmark.model';
import { LIVE_INTERVAL_MS } from '../rgw-benchmark-list/rgw-benchmark-list.component';

export interface DaemonRow {
  variant: string;
  workload: string;
  server: string;
  daemon: string;
  host: string;
  cpu_cores: number | null;
  rss_mib: number | null;
}

export interface WorkloadChart {
  workload: string;
  points: ChartPoint[];
}

@Component({
  selector: 'cd-rgw-benchmark-details',
  templateUrl: './rgw-benchmark-details.component.html',
  styleUrls: ['./rgw-benchmark-details.component.scss']
})
export class RgwBenchmarkDetailsComponent implements OnInit, OnDestroy {
  permission: Permission;
  runId: string;
  run: BenchmarkRun = null;
  live: BenchmarkLive = null;
  figures: ComparisonFigure[] = [];
  rows: BenchmarkComparisonRow[] = [];
  daemonRows: DaemonRow[] = [];
  charts: WorkloadChart[] = [];
  aborting = false;
  error: string = null;

  private polling: Subscription;

  constructor(
    private route: ActivatedRoute,
    private rgwBenchmarkService: RgwBenchmarkService,
    private authStorageService: AuthStorageService
  ) {
    this.permission = this.authStorageService.getPermissions().rgw;
  }

  ngOnInit() {
    this.runId = this.route.snapshot.paramMap.get('runId');
    // While the run goes on, its record and the live figures are followed; once it
    // ended, one last read gives its tables and the polling stops.
    this.polling = timer(0, LIVE_INTERVAL_MS)
      .pipe(
        switchMap(() =>
          forkJoin({
            run: this.rgwBenchmarkService.get(this.runId),
            live: this.rgwBenchmarkService.live()
          })
        )
      )
      .subscribe({
        next: ({ run, live }) => {
          this.show(run);
          this.live = live && live.run_id === this.runId ? live : null;
          if (run.state !== 'running') {
            this.aborting = false;
            this.polling?.unsubscribe();
          }
        },
        error: (e) => {
          this.error = e?.error?.detail || $localize`The run could not be read`;
          e?.preventDefault?.();
        }
      });
  }

  ngOnDestroy() {
    this.polling?.unsubscribe();
  }

  show(run: BenchmarkRun) {
    this.run = run;
    this.rows = run.comparison || [];
    this.figures = COMPARISON_FIGURES.filter((f) =>
      this.rows.some((row) => row[f.key] !== undefined && row[f.key] !== null)
    );
    this.daemonRows = daemonRows(run);
    this.charts = perSecondCharts(run);
  }

  isBaseline(row: BenchmarkComparisonRow): boolean {
    return row.variant === this.run?.baseline;
  }

  /** Whether a figure's change is beyond the noise: its interval's verdict, else (rows
   * stored before figures had intervals) the row's, for the figure it was tested on. */
  significant(row: BenchmarkComparisonRow, figure: ComparisonFigure): boolean {
    const interval = row.intervals?.[figure.key];
    if (interval) {
      return !!interval.significant;
    }
    return figure.key === headline(row) && !!row.significant;
  }

  /** Half the width of a figure's interval, in points of %, when it has one. */
  halfWidth(row: BenchmarkComparisonRow, figure: ComparisonFigure): number | null {
    const interval = row.intervals?.[figure.key];
    if (!interval || interval.low === null || interval.high === null) {
      return null;
    }
    return (interval.high - interval.low) / 2;
  }

  abortRun() {
    this.aborting = true;
    this.rgwBenchmarkService.abort().subscribe({
      error: (e) => {
        this.aborting = false;
        this.error = e?.error?.detail || $localize`The run could not be aborted`;
        e?.preventDefault?.();
      }
    });
  }
}

/** The figure rgwbench tested a row's significance on. */
function headline(row: BenchmarkComparisonRow): string {
  return row.tested === 'latency_mean' ? 'latency_mean_pct' : 'ops_pct';
}

function variantWorkloads(run: BenchmarkRun): [string, BenchmarkWorkloadResult][] {
  const found: [string, BenchmarkWorkloadResult][] = [];
  (run.variants || []).forEach((variant: any) => {
    if (variant && typeof variant === 'object') {
      (variant.workloads || []).forEach((w: BenchmarkWorkloadResult) =>
        found.push([variant.name, w])
      );
    }
  });
  return found;
}

/** Each RGW (and HAProxy) daemon's CPU and memory in each workload of each variant. */
export function daemonRows(run: BenchmarkRun): DaemonRow[] {
  const rows: DaemonRow[] = [];
  variantWorkloads(run).forEach(([variant, workload]) => {
    (['rgw', 'haproxy'] as const).forEach((server) => {
      (workload[server]?.per_daemon || []).forEach((d) =>
        rows.push({
          variant,
          workload: workload.name,
          server: server === 'rgw' ? 'RGW' : 'HAProxy',
          daemon: d.daemon || '-',
          host: d.host || '-',
          cpu_cores: d.cpu_cores ?? null,
          rss_mib: d.rss_mib ?? null
        })
      );
    });
  });
  return rows;
}

/** Per workload, the operations per second of each variant over the workload's seconds. */
export function perSecondCharts(run: BenchmarkRun): WorkloadChart[] {
  const byWorkload = new Map<string, Map<number, Record<string, number>>>();
  variantWorkloads(run).forEach(([variant, workload]) => {
    if (workload.error || !workload.per_second?.length) {
      return;
    }
    const seconds = byWorkload.get(workload.name) || new Map<number, Record<string, number>>();
    workload.per_second.forEach((s) => {
      const values = seconds.get(s.t) || {};
      values[variant] = s.ops;
      seconds.set(s.t, values);
    });
    byWorkload.set(workload.name, seconds);
  });
  // The time axis counts seconds from the workload's start.
  return Array.from(byWorkload.entries()).map(([workload, seconds]) => ({
    workload,
    points: Array.from(seconds.entries())
      .sort((a, b) => a[0] - b[0])
      .map(([t, values]) => ({ timestamp: new Date(t * 1000), values }))
  }));
}
