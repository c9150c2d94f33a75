/**
 * A status line on stderr: rewritten in place on a terminal (at most 10 times a second), printed as a new
 * line at most once a second otherwise (logs, CI), so a long run shows it is alive without flooding.
 */
export class ProgressLine {
  private lastPrinted = 0;
  private pending = '';
  private printed = '';
  private silenced = false;
  private readonly tty: boolean;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.tty = stream.isTTY === true;
  }

  /** Replaces the status. */
  update(text: string): void {
    if (this.silenced) return;
    this.pending = text;
    if (Date.now() - this.lastPrinted >= (this.tty ? 100 : 1000)) this.flush();
  }

  /** Prints a line that stays (a finished step). */
  log(text: string): void {
    if (this.silenced) return;
    if (this.tty) this.stream.write('\r\x1b[2K');
    this.stream.write(`${text}\n`);
    this.pending = '';
  }

  /** Leaves the current status as a finished line. */
  done(): void {
    if (this.pending && (this.tty || this.pending !== this.printed)) this.log(this.pending);
    this.pending = '';
  }

  /** Prints nothing more (the demo is stopping). */
  silence(): void {
    this.silenced = true;
  }

  private flush(): void {
    this.stream.write(this.tty ? `\r\x1b[2K${this.pending}` : `${this.pending}\n`);
    this.printed = this.pending;
    this.lastPrinted = Date.now();
  }
}
