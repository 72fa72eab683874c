import { HttpClientTestingModule } from '@angular/common/http/testing';
import {
  ComponentFixture,
  TestBed,
  discardPeriodicTasks,
  fakeAsync,
  tick
} from '@angular/core/testing';
import { ActivatedRoute, convertToParamMap } from '@angular/router';
import { RouterTestingModule } from '@angular/router/testing';

import { of } from 'rxjs';

import { RgwBenchmarkService } from '~/app/shared/api/rgw-benchmark.service';
import { Permission } from '~/app/shared/models/permissions';
import { AuthStorageService } from '~/app/shared/services/auth-storage.service';
import { SharedModule } from '~/app/shared/shared.module';
import { configureTestBed } from '~/testing/unit-test-helper';
import { BenchmarkRun } from '../models/rgw-benchmark.model';
import { LIVE_INTERVAL_MS } from '../rgw-benchmark-list/rgw-benchmark-list.component';
import {
  RgwBenchmarkDetailsComponent,
  daemonRows,
  perSecondCharts
} from './rgw-benchmark-details.component';

const RUN: BenchmarkRun = {
  run_id: 'r-1',
  profile: 'rgw-threads',
  state: 'complete',
  baseline: 'as-is',
  comparison: [
    {
      workload: 'put-4KiB',
      variant: 'threads',
      ops_pct: 12.5,
      latency_mean_pct: -3,
      rgw_cpu_pct: null,
      significant: true,
      tested: 'ops_per_s',
      noise_pct: 2.1,
      intervals: { latency_mean_pct: { low: -9, high: 3, significant: false } }
    }
  ],
  variants: [
    {
      name: 'as-is',
      workloads: [
        {
          name: 'put-4KiB',
          per_second: [
            { t: 1, ops: 90 },
            { t: 0, ops: 80 }
          ],
          rgw: {
            per_daemon: [{ daemon: 'rgw.a', host: 'h1', cpu_cores: 0.5, rss_mib: 300 }]
          }
        }
      ]
    },
    {
      name: 'threads',
      workloads: [
        { name: 'put-4KiB', per_second: [{ t: 0, ops: 100 }] },
        { name: 'get-4KiB', error: 'refused', per_second: [{ t: 0, ops: 1 }] }
      ]
    }
  ]
};

describe('RgwBenchmarkDetailsComponent', () => {
  let component: RgwBenchmarkDetailsComponent;
  let fixture: ComponentFixture<RgwBenchmarkDetailsComponent>;
  let service: RgwBenchmarkService;

  configureTestBed({
    declarations: [RgwBenchmarkDetailsComponent],
    imports: [HttpClientTestingModule, RouterTestingModule, SharedModule],
    providers: [
      {
        provide: ActivatedRoute,
        useValue: { snapshot: { paramMap: convertToParamMap({ runId: 'r-1' }) } }
      }
    ]
  });

  beforeEach(() => {
    const auth = TestBed.inject(AuthStorageService);
    spyOn(auth, 'getPermissions').and.returnValue({ rgw: new Permission(['read']) } as any);
    service = TestBed.inject(RgwBenchmarkService);
    fixture = TestBed.createComponent(RgwBenchmarkDetailsComponent);
    component = fixture.componentInstance;
  });

  it('should show only the figures the comparison has', () => {
    component.show(RUN);
    expect(component.figures.map((f) => f.key)).toEqual(['ops_pct', 'latency_mean_pct']);
  });

  it('should mark the tested figure by the row, the others by their interval', () => {
    component.show(RUN);
    const row = RUN.comparison[0];
    const [ops, latency] = component.figures;
    expect(component.significant(row, ops)).toBe(true);
    expect(component.significant(row, latency)).toBe(false);
    expect(component.halfWidth(row, latency)).toBe(6);
    expect(component.halfWidth(row, ops)).toBeNull();
  });

  it('should list each daemon of each workload', () => {
    expect(daemonRows(RUN)).toEqual([
      {
        variant: 'as-is',
        workload: 'put-4KiB',
        server: 'RGW',
        daemon: 'rgw.a',
        host: 'h1',
        cpu_cores: 0.5,
        rss_mib: 300
      }
    ]);
  });

  it('should chart each workload per second, one series per variant, without failed ones', () => {
    const charts = perSecondCharts(RUN);
    expect(charts.map((c) => c.workload)).toEqual(['put-4KiB']);
    expect(charts[0].points.map((p) => p.values)).toEqual([
      { 'as-is': 80, threads: 100 },
      { 'as-is': 90 }
    ]);
  });

  it('should follow a running run until it ended, then stop asking', fakeAsync(() => {
    const get = jest
      .spyOn(service, 'get')
      .mockReturnValueOnce(of({ ...RUN, state: 'running', comparison: [] }))
      .mockReturnValue(of(RUN));
    jest
      .spyOn(service, 'live')
      .mockReturnValueOnce(of({ run_id: 'r-1', profile: 'quick', state: 'running' }))
      .mockReturnValue(of(null));
    fixture.detectChanges();
    tick(0);
    expect(component.live.run_id).toBe('r-1');
    tick(LIVE_INTERVAL_MS);
    expect(component.run.state).toBe('complete');
    expect(component.live).toBeNull();
    tick(3 * LIVE_INTERVAL_MS);
    expect(get).toHaveBeenCalledTimes(2);
    discardPeriodicTasks();
  }));

  it('should render the comparison table', fakeAsync(() => {
    jest.spyOn(service, 'get').mockReturnValue(of(RUN));
    jest.spyOn(service, 'live').mockReturnValue(of(null));
    fixture.detectChanges();
    tick(0);
    fixture.detectChanges();
    const table: HTMLElement = fixture.nativeElement.querySelector('[data-testid="comparison"]');
    expect(table.textContent).toContain('12.5%');
    expect(table.querySelector('strong').textContent).toContain('12.5%');
    component.ngOnDestroy();
  }));
});
