import { restoreBackup, takeBackup } from "../domain/data/backups.ts";
import { type FileCommand, requiredFlag } from "./command.ts";

/** Backups of a local store's file (decisions.md, "Data over time"). */
export const backupCommands: Record<string, FileCommand> = {
  "backup": {
    usage: "backup --to <new file>",
    summary:
      "Copies the store, consistently, into a new file, while the service runs (local store only).",
    onFile: (settings, flags) => takeBackup(settings, requiredFlag(flags, "to")),
  },
  "restore": {
    usage: "restore --from <backup file>",
    summary: "Puts a backup in the store's place; every instance must be stopped first.",
    onFile: (settings, flags) => restoreBackup(settings, requiredFlag(flags, "from")),
  },
};
