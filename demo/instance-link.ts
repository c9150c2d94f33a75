// Preloaded into each instance of the sample the demo starts (node --import): the instance exits as soon as
// the demo goes away, however it ends (the IPC channel closes even on SIGKILL), from the first moment, before
// the app's own imports load. It asks the app to stop as a SIGTERM would (the sample enables Nest's shutdown
// hooks, so its locks are released first); a process that has not gone 5 s later exits anyway. Without the
// demo (no IPC channel) it does nothing. The sample itself knows nothing of the demo.
if (process.send) {
  const leave = (): void => {
    setTimeout(() => process.exit(1), 5000).unref();
    process.kill(process.pid, 'SIGTERM');
  };
  process.once('disconnect', leave);
  if (!process.connected) leave();
  // the channel alone must not keep this process alive once the app has closed
  process.channel?.unref();
}

export {};
