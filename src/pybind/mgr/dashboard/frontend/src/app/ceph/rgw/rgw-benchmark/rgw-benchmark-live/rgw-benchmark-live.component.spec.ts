import { ComponentFixture, TestBed } from '@angular/core/testing';
import { RouterTestingModule } from '@angular/router/testing';

import { configureTestBed } from '~/testing/unit-test-helper';
import { BenchmarkLive } from '../models/rgw-benchmark.model';
import { RgwBenchmarkLiveComponent } from './rgw-benchmark-live.component';

describe('RgwBenchmarkLiveComponent', () => {
  let component: RgwBenchmarkLiveComponent;
  let fixture: ComponentFixture<RgwBenchmarkLiveComponent>;

  const live = (opsPerS: number, fraction: number): BenchmarkLive => ({
    run_id: 'r-1',
    profile: 'quick',
    state: 'running',
    progress: 'variant as-is: put-4KiB',
    fraction,
    live: { ops_per_s: opsPerS, mib_per_s: 1.5, phase: 'measure' }
  });

  configureTestBed({
    declarations: [RgwBenchmarkLiveComponent],
    imports: [RouterTestingModule]
  });

  beforeEach(() => {
    fixture = TestBed.createComponent(RgwBenchmarkLiveComponent);
    component = fixture.componentInstance;
  });

  const show = (value: BenchmarkLive) => {
    fixture.componentRef.setInput('live', value);
    fixture.detectChanges();
  };

  const find = (testid: string): HTMLElement =>
    fixture.nativeElement.querySelector(`[data-testid="${testid}"]`);

  it('should show the progress and the figures of the run', () => {
    show(live(120.25, 0.456));
    expect(component.percent).toBe(46);
    expect(find('live-message').textContent).toContain('variant as-is: put-4KiB');
    expect(find('live-figures').textContent).toContain('120.3 ops/s');
    expect(find('live-figures').textContent).toContain('1.50 MiB/s');
  });

  it('should keep one point of throughput per update for its chart', () => {
    show(live(100, 0.1));
    show(live(200, 0.2));
    expect(component.points.map((p) => p.values['ops/s'])).toEqual([100, 200]);
  });

  it('should offer no abort without the permission', () => {
    show(live(1, 0));
    expect(find('abort')).toBeNull();
  });

  it('should abort only once confirmed', () => {
    fixture.componentRef.setInput('canAbort', true);
    show(live(1, 0));
    const emitted = jest.fn();
    component.abort.subscribe(emitted);
    find('abort').click();
    fixture.detectChanges();
    expect(emitted).not.toHaveBeenCalled();
    find('abort-confirm').click();
    expect(emitted).toHaveBeenCalledTimes(1);
  });
});
