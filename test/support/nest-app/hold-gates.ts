/** Named gates a test opens to end the holds that wait on them. */
export class HoldGates {
  private readonly gates = new Map<string, { promise: Promise<void>; open: () => void }>();

  /** Resolves once `name` is opened (at once when it already is). */
  opened(name: string): Promise<void> {
    return this.gate(name).promise;
  }

  /** Opens `name`. */
  open(name: string): void {
    this.gate(name).open();
  }

  private gate(name: string): { promise: Promise<void>; open: () => void } {
    let gate = this.gates.get(name);
    if (!gate) {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      gate = { promise, open };
      this.gates.set(name, gate);
    }
    return gate;
  }
}
