// One logger for the parts built before the HTTP app (whose logger is the service's): what they
// say is held until the app's logger is attached, then written there in order.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
type Write = (fieldsOrMessage: object | string, message?: string) => void;
/** The shape of a pino logger, as far as the relay writes to it. */
export type LogSink = Record<LogLevel, Write>;

export class LogRelay {
  private sink: LogSink | null = null;
  private held: { level: LogLevel; message: string; fields: object | undefined }[] = [];

  /** Writes to `sink` from now on, after everything held until now. */
  attach(sink: LogSink): void {
    this.sink = sink;
    for (const { level, message, fields } of this.held.splice(0)) this.write(level, message, fields);
  }

  readonly write = (level: LogLevel, message: string, fields?: object): void => {
    if (!this.sink) this.held.push({ level, message, fields });
    else if (fields) this.sink[level](fields, message);
    else this.sink[level](message);
  };
}
