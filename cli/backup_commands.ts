import { restoreBackup, takeBackup } from "../domain/backups.ts";
import { type FileCommand, requiredFlag } from "./command.ts";

/** Backups of a local store's file (decisions.md, "Data over time"). */
export const backupCommands: Record<string, FileCommand> = {
  "backup": {
    usage: "backup --to <new file>",
    onFile: (settings, flags) => takeBackup(settings, requiredFlag(flags, "to")),
  },
  "restore": {
    usage: "restore --from <backup file>",
    onFile: (settings, flags) => restoreBackup(settings, requiredFlag(flags, "from")),
  },
};
