import { ComponentFixture, TestBed } from '@angular/core/testing';

import { configureTestBed } from '~/testing/unit-test-helper';
import { RgwBenchmarkFindingsComponent } from './rgw-benchmark-findings.component';

describe('RgwBenchmarkFindingsComponent', () => {
  let component: RgwBenchmarkFindingsComponent;
  let fixture: ComponentFixture<RgwBenchmarkFindingsComponent>;

  configureTestBed({
    declarations: [RgwBenchmarkFindingsComponent]
  });

  beforeEach(() => {
    fixture = TestBed.createComponent(RgwBenchmarkFindingsComponent);
    component = fixture.componentInstance;
  });

  it('should say so when nothing was found', () => {
    component.findings = [];
    fixture.detectChanges();
    expect(fixture.nativeElement.querySelector('[data-testid="no-findings"]')).not.toBeNull();
  });

  it('should list what refuses a run first', () => {
    component.findings = [
      { id: 'cache-warm', level: 'info', summary: 'a' },
      { id: 'no-rgw-daemon', level: 'refuse', summary: 'b' },
      { id: 'clock-skew', level: 'warn', summary: 'c', variant: 'tls', workload: 'put-4KiB' }
    ];
    expect(component.ordered.map((f) => f.id)).toEqual([
      'no-rgw-daemon',
      'clock-skew',
      'cache-warm'
    ]);
    expect(component.alertType(component.ordered[0])).toBe('danger');
    expect(component.where(component.ordered[1])).toBe('tls / put-4KiB');
  });
});
