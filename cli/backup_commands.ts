import { restoreBackup, takeBackup } from "../domain/data/backups.ts";
import { type FileCommand, requiredFlag } from "./command.ts";

/** Backups of a local store's file (decisions.md, "Data over time"). */
export const backupCommands: Record<string, FileCommand> = {
  "backup": {
    usage: "backup --to <new file>",
    summary:
      "Copies the store, consistently, into a new file, while the service runs (local store only).",
    onFile: (settings, flags) => takeBackup(settings, requiredFlag(flags, "to")),
    remote: {
      down: "to",
      hint:
        "Through ADMIN_URL the service's own process makes the backup, and a file store's needs every permission, which it runs without: run backup where the store is (docker exec <container> admin backup --to <file>), or export through ADMIN_URL.",
    },
  },
  "restore": {
    usage: "restore --from <backup file>",
    summary: "Puts a backup in the store's place; every instance must be stopped first.",
    onFile: (settings, flags) => restoreBackup(settings, requiredFlag(flags, "from")),
    remote: {
      localOnly:
        "runs only where the store is, with every instance stopped (it puts a file in the store's place); without ADMIN_URL, on that machine",
    },
  },
};
