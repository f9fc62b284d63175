import {
  BrokenCircuitError,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { LlmError } from './errors';

export interface BreakerSettings {
  /** Consecutive failed attempts (5xx, timeouts, malformed answers, …) that open the circuit. */
  failures: number;
  /** How long an open circuit refuses calls before one trial call may go through (ms). */
  cooldownMs: number;
}

export const defaultBreakerSettings: BreakerSettings = { failures: 5, cooldownMs: 30_000 };

export type BreakerState = 'closed' | 'open' | 'half_open';

/**
 * The circuit breaker of one provider + model (cockatiel's, around every attempt): after
 * `failures` consecutive failed attempts it opens and calls are refused at once with
 * LlmError('circuit_open'), so callers fall back without waiting on a model that keeps failing;
 * after `cooldownMs` one trial call goes through (half-open) while the others are still refused;
 * the trial's success closes the circuit, its failure opens it for another cool-down.
 * A cancelled call says nothing about the model and is not counted, except as the trial.
 */
export class ModelBreaker {
  private readonly policy: CircuitBreakerPolicy;
  private openedAt = 0;

  constructor(
    readonly model: string,
    private readonly settings: BreakerSettings,
    onChange: (state: BreakerState) => void = () => undefined,
  ) {
    this.policy = circuitBreaker(
      handleWhen(
        (err) => LlmError.from(err).code !== 'cancelled' || this.policy.state === CircuitState.HalfOpen,
      ),
      { halfOpenAfter: settings.cooldownMs, breaker: new ConsecutiveBreaker(Math.max(1, settings.failures)) },
    );
    this.policy.onBreak(() => (this.openedAt = Date.now()));
    this.policy.onStateChange((s) => onChange(stateName(s)));
  }

  get state(): BreakerState {
    return stateName(this.policy.state);
  }

  /**
   * A call now would be refused without reaching the model: open within its cool-down, or
   * half-open with its trial call in flight (cockatiel would queue behind the trial; we do not).
   */
  get refusing(): boolean {
    const s = this.policy.state;
    if (s === CircuitState.HalfOpen || s === CircuitState.Isolated) return true;
    return s === CircuitState.Open && Date.now() - this.openedAt < this.settings.cooldownMs;
  }

  /** Runs one attempt through the breaker; refused at once while it is open. */
  async run<T>(attempt: () => Promise<T>): Promise<T> {
    if (this.refusing) throw this.refusal();
    try {
      return await this.policy.execute(attempt);
    } catch (err) {
      if (err instanceof BrokenCircuitError) throw this.refusal();
      throw err;
    }
  }

  private refusal(): LlmError {
    return new LlmError(
      'circuit_open',
      `model ${this.model} failed ${this.settings.failures} times in a row: calls to it are paused for up to ${this.settings.cooldownMs} ms`,
    );
  }
}

function stateName(s: CircuitState): BreakerState {
  return s === CircuitState.Closed ? 'closed' : s === CircuitState.HalfOpen ? 'half_open' : 'open';
}
