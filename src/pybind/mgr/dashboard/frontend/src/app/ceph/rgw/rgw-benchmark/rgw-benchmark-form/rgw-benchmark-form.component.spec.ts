import { HttpClientTestingModule } from '@angular/common/http/testing';
import { ComponentFixture, TestBed } from '@angular/core/testing';
import { FormsModule } from '@angular/forms';
import { Router } from '@angular/router';
import { RouterTestingModule } from '@angular/router/testing';

import { of, throwError } from 'rxjs';

import { RgwBenchmarkService } from '~/app/shared/api/rgw-benchmark.service';
import { Permission } from '~/app/shared/models/permissions';
import { AuthStorageService } from '~/app/shared/services/auth-storage.service';
import { configureTestBed } from '~/testing/unit-test-helper';
import { RgwBenchmarkFormComponent } from './rgw-benchmark-form.component';

describe('RgwBenchmarkFormComponent', () => {
  let component: RgwBenchmarkFormComponent;
  let fixture: ComponentFixture<RgwBenchmarkFormComponent>;
  let service: RgwBenchmarkService;

  configureTestBed({
    declarations: [RgwBenchmarkFormComponent],
    imports: [FormsModule, HttpClientTestingModule, RouterTestingModule]
  });

  const create = (permissions: string[]) => {
    const auth = TestBed.inject(AuthStorageService);
    spyOn(auth, 'getPermissions').and.returnValue({ rgw: new Permission(permissions) } as any);
    service = TestBed.inject(RgwBenchmarkService);
    spyOn(service, 'profiles').and.returnValue(
      of([
        { name: 'sse', builtin: true, estimated_s: 600 },
        { name: 'quick', builtin: true, estimated_s: 61 }
      ])
    );
    spyOn(service, 'findings').and.returnValue(of([]));
    fixture = TestBed.createComponent(RgwBenchmarkFormComponent);
    component = fixture.componentInstance;
    fixture.detectChanges();
  };

  const planned = () => {
    spyOn(service, 'plan').and.returnValue(of({ plan: {}, text: 'plan of quick' }));
    component.overrides = { duration: ' 5 ', repeats: '' };
    component.showPlan();
  };

  it('should choose the quick profile and estimate minutes', () => {
    create(['read', 'create']);
    expect(component.profile).toBe('quick');
    expect(component.minutes({ name: 'quick', estimated_s: 61 })).toBe(2);
  });

  it('should plan with the given overrides only, as text', () => {
    create(['read', 'create']);
    planned();
    expect(service.plan).toHaveBeenCalledWith('quick', { duration: '5' });
    expect(component.plan.text).toBe('plan of quick');
  });

  it('should start only once the plan shown is confirmed', () => {
    create(['read', 'create']);
    const start = spyOn(service, 'start').and.returnValue(of({ run_id: 'r-9' }));
    const navigate = spyOn(TestBed.inject(Router), 'navigate');
    planned();
    expect(component.canStart()).toBe(false);
    component.confirmed = true;
    expect(component.canStart()).toBe(true);
    component.start();
    expect(start).toHaveBeenCalledWith('quick', { duration: '5' });
    expect(navigate).toHaveBeenCalledWith(['/rgwbench/run', 'r-9']);
  });

  it('should need a new plan once the form changed', () => {
    create(['read', 'create']);
    planned();
    component.confirmed = true;
    component.overrides.duration = '50';
    expect(component.canStart()).toBe(false);
    component.changed();
    expect(component.plan).toBeNull();
    expect(component.confirmed).toBe(false);
  });

  it('should never start for a reader', () => {
    create(['read']);
    const start = spyOn(service, 'start');
    planned();
    component.confirmed = true;
    component.start();
    expect(start).not.toHaveBeenCalled();
  });

  it('should show why rgwbench refused', () => {
    create(['read', 'create']);
    spyOn(service, 'plan').and.returnValue(
      throwError({ error: { detail: 'unknown profile nope' } })
    );
    component.showPlan();
    expect(component.error).toBe('unknown profile nope');
    expect(component.busy).toBe(false);
  });
});
