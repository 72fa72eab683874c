import { HttpClientTestingModule } from '@angular/common/http/testing';
import {
  ComponentFixture,
  TestBed,
  discardPeriodicTasks,
  fakeAsync,
  tick
} from '@angular/core/testing';
import { BrowserAnimationsModule } from '@angular/platform-browser/animations';
import { RouterTestingModule } from '@angular/router/testing';

import { of, throwError } from 'rxjs';

import { RgwBenchmarkService } from '~/app/shared/api/rgw-benchmark.service';
import { Permission } from '~/app/shared/models/permissions';
import { AuthStorageService } from '~/app/shared/services/auth-storage.service';
import { SharedModule } from '~/app/shared/shared.module';
import { configureTestBed } from '~/testing/unit-test-helper';
import { RgwBenchmarkFindingsComponent } from '../rgw-benchmark-findings/rgw-benchmark-findings.component';
import { RgwBenchmarkLiveComponent } from '../rgw-benchmark-live/rgw-benchmark-live.component';
import { LIVE_INTERVAL_MS, RgwBenchmarkListComponent } from './rgw-benchmark-list.component';

describe('RgwBenchmarkListComponent', () => {
  let component: RgwBenchmarkListComponent;
  let fixture: ComponentFixture<RgwBenchmarkListComponent>;
  let service: RgwBenchmarkService;
  let permissions: string[];

  configureTestBed({
    declarations: [
      RgwBenchmarkListComponent,
      RgwBenchmarkLiveComponent,
      RgwBenchmarkFindingsComponent
    ],
    imports: [BrowserAnimationsModule, HttpClientTestingModule, RouterTestingModule, SharedModule]
  });

  const create = () => {
    const auth = TestBed.inject(AuthStorageService);
    spyOn(auth, 'getPermissions').and.returnValue({ rgw: new Permission(permissions) } as any);
    service = TestBed.inject(RgwBenchmarkService);
    spyOn(service, 'findings').and.returnValue(of([]));
    spyOn(service, 'list').and.returnValue(
      of([
        { run_id: 'r-old', profile: 'quick', state: 'complete', started: 1 },
        { run_id: 'r-new', profile: 'sse', state: 'complete', started: 2 }
      ])
    );
    fixture = TestBed.createComponent(RgwBenchmarkListComponent);
    component = fixture.componentInstance;
  };

  const startButton = () => fixture.nativeElement.querySelector('[data-testid="start-run"]');

  it('should offer no start to a reader', fakeAsync(() => {
    permissions = ['read'];
    create();
    spyOn(service, 'live').and.returnValue(of(null));
    // The table asks for its data as it renders; the list's own test reads it.
    spyOn(component, 'loadRuns');
    fixture.detectChanges();
    tick();
    expect(startButton()).toBeNull();
    expect(component.permission.update).toBe(false);
    discardPeriodicTasks();
    component.ngOnDestroy();
  }));

  it('should offer a start to a manager', fakeAsync(() => {
    permissions = ['read', 'create', 'update', 'delete'];
    create();
    spyOn(service, 'live').and.returnValue(of(null));
    // The table asks for its data as it renders; the list's own test reads it.
    spyOn(component, 'loadRuns');
    fixture.detectChanges();
    tick();
    expect(startButton()).not.toBeNull();
    discardPeriodicTasks();
    component.ngOnDestroy();
  }));

  it('should list the newest run first', () => {
    permissions = ['read'];
    create();
    component.loadRuns();
    expect(component.runs.map((r) => r.run_id)).toEqual(['r-new', 'r-old']);
  });

  it('should reload the runs once the run in progress ended', fakeAsync(() => {
    permissions = ['read'];
    create();
    const running = { run_id: 'r-3', profile: 'quick', state: 'running' };
    const live = jest
      .spyOn(service, 'live')
      .mockReturnValueOnce(of(running))
      .mockReturnValue(of(null));
    const loadRuns = jest.spyOn(component, 'loadRuns').mockImplementation(() => undefined);
    component.ngOnInit();
    tick(0);
    expect(component.live).toEqual(running);
    expect(loadRuns).not.toHaveBeenCalled();
    tick(LIVE_INTERVAL_MS);
    expect(live).toHaveBeenCalledTimes(2);
    expect(component.live).toBeNull();
    expect(loadRuns).toHaveBeenCalledTimes(1);
    component.ngOnDestroy();
  }));

  it('should show why an abort was refused', () => {
    permissions = ['read', 'update'];
    create();
    spyOn(service, 'abort').and.returnValue(
      throwError({ error: { detail: 'no run in progress' } })
    );
    component.abortRun();
    expect(component.error).toBe('no run in progress');
    expect(component.aborting).toBe(false);
  });
});
