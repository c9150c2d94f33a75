import { describePer, type CommandDelta } from './redis.js';

/** Server commands per acquisition that one contender caused in one scenario. */
export interface CommandsPerAcquisition {
  readonly perAcquisition: number;
  /** `evalsha 2.00, get 2.00, ...`: the same per acquisition, by command. */
  readonly breakdown: string;
}

/** Commands per acquisition measured along the way (scenario → contender → counts), for the commands table. */
export class CommandLog {
  private readonly seen = new Map<number, Map<string, CommandsPerAcquisition>>();

  record(scenario: number, library: string, delta: CommandDelta, acquisitions: number): CommandsPerAcquisition {
    const counts = {
      perAcquisition: delta.total / acquisitions,
      breakdown: describePer(delta.byCommand, acquisitions),
    };
    if (!this.seen.has(scenario)) this.seen.set(scenario, new Map());
    this.seen.get(scenario)?.set(library, counts);
    return counts;
  }

  get(scenario: number, library: string): CommandsPerAcquisition | undefined {
    return this.seen.get(scenario)?.get(library);
  }

  /** Every contender measured in `scenario`, in the order they ran. */
  of(scenario: number): ReadonlyMap<string, CommandsPerAcquisition> {
    return this.seen.get(scenario) ?? new Map();
  }
}
