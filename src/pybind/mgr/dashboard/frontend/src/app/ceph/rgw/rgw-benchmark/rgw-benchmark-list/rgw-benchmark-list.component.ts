import { Component, OnDestroy, OnInit, TemplateRef, ViewChild } from '@angular/core';

import { Subscription, timer } from 'rxjs';
import { switchMap } from 'rxjs/operators';

import { RgwBenchmarkService } from '~/app/shared/api/rgw-benchmark.service';
import { CdTableColumn } from '~/app/shared/models/cd-table-column';
import { CdTableFetchDataContext } from '~/app/shared/models/cd-table-fetch-data-context';
import { Permission } from '~/app/shared/models/permissions';
import { AuthStorageService } from '~/app/shared/services/auth-storage.service';
import {
  BenchmarkFinding,
  BenchmarkLive,
  BenchmarkRunSummary
} from '../models/rgw-benchmark.model';

/** How often the run in progress is asked for (ms). */
export const LIVE_INTERVAL_MS = 2000;

@Component({
  selector: 'cd-rgw-benchmark-list',
  templateUrl: './rgw-benchmark-list.component.html'
})
export class RgwBenchmarkListComponent implements OnInit, OnDestroy {
  @ViewChild('runTpl', { static: true })
  runTpl: TemplateRef<any>;
  @ViewChild('timeTpl', { static: true })
  timeTpl: TemplateRef<any>;

  permission: Permission;
  columns: CdTableColumn[] = [];
  runs: BenchmarkRunSummary[] = [];
  findings: BenchmarkFinding[] = null;
  live: BenchmarkLive = null;
  aborting = false;
  error: string = null;

  private liveSubscription: Subscription;

  constructor(
    private rgwBenchmarkService: RgwBenchmarkService,
    private authStorageService: AuthStorageService
  ) {
    this.permission = this.authStorageService.getPermissions().rgw;
  }

  ngOnInit() {
    this.columns = [
      { name: $localize`Run`, prop: 'run_id', flexGrow: 2, cellTemplate: this.runTpl },
      { name: $localize`Profile`, prop: 'profile', flexGrow: 1 },
      { name: $localize`State`, prop: 'state', flexGrow: 1 },
      { name: $localize`Started`, prop: 'started', flexGrow: 2, cellTemplate: this.timeTpl },
      { name: $localize`Finished`, prop: 'finished', flexGrow: 2, cellTemplate: this.timeTpl },
      {
        name: $localize`Variants`,
        prop: 'variants',
        flexGrow: 3,
        pipe: { transform: (v: string[]) => (v || []).join(', ') }
      }
    ];
    this.rgwBenchmarkService.findings().subscribe((found) => (this.findings = found));
    this.liveSubscription = timer(0, LIVE_INTERVAL_MS)
      .pipe(switchMap(() => this.rgwBenchmarkService.live()))
      .subscribe((live) => {
        const ended = this.live && (!live || live.run_id !== this.live.run_id);
        this.live = live;
        if (ended) {
          this.aborting = false;
          this.loadRuns();
        }
      });
  }

  ngOnDestroy() {
    this.liveSubscription?.unsubscribe();
  }

  loadRuns(context?: CdTableFetchDataContext) {
    this.rgwBenchmarkService.list().subscribe(
      (runs) => (this.runs = [...runs].sort((a, b) => (b.started || 0) - (a.started || 0))),
      () => context?.error()
    );
  }

  abortRun() {
    this.aborting = true;
    this.error = null;
    this.rgwBenchmarkService.abort().subscribe({
      error: (e) => {
        this.aborting = false;
        this.error = e?.error?.detail || $localize`The run could not be aborted`;
        e.preventDefault?.();
      }
    });
  }
}
