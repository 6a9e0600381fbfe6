import type { AddSchedule, ScheduleTiming } from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { checkTiming, type TimingCheck } from "./schedule-timing.js";
import {
  activeScheduleRuns,
  getSchedule,
  listBufferedSchedules,
  listDueSchedules,
  listSchedules,
  nextScheduleDueAt,
  readScheduleLaunch,
} from "./schedule-readers.js";
import {
  addSchedule,
  deleteSchedule,
  pauseSchedule,
  planFiring,
  type RecordFiring,
  recordFiring,
  resumeSchedule,
} from "./schedules.js";

/** The schedules' transitions and readers (`store.schedules`), on the store's one connection. */
export class ScheduleStore {
  constructor(private readonly use: () => StoreContext) {}

  checkTiming(timing: ScheduleTiming): TimingCheck {
    return checkTiming(timing);
  }
  add(req: AddSchedule) {
    return addSchedule(this.use(), req);
  }
  pause(scheduleId: string, note: string | null = null) {
    return pauseSchedule(this.use(), scheduleId, note);
  }
  resume(scheduleId: string) {
    return resumeSchedule(this.use(), scheduleId);
  }
  delete(scheduleId: string) {
    return deleteSchedule(this.use(), scheduleId);
  }
  planFiring(scheduleId: string) {
    return planFiring(this.use(), scheduleId);
  }
  recordFiring(req: RecordFiring) {
    return recordFiring(this.use(), req);
  }
  get(scheduleId: string) {
    return getSchedule(this.use(), scheduleId);
  }
  list() {
    return listSchedules(this.use());
  }
  readLaunch(scheduleId: string) {
    return readScheduleLaunch(this.use(), scheduleId);
  }
  nextDueAt(after?: number) {
    return nextScheduleDueAt(this.use(), after);
  }
  listDue(now: number, limit: number) {
    return listDueSchedules(this.use(), now, limit);
  }
  listBuffered() {
    return listBufferedSchedules(this.use());
  }
  activeRuns(scheduleId: string) {
    return activeScheduleRuns(this.use(), scheduleId);
  }
}
