import { exportStore, importStore } from "../domain/data/moves.ts";
import { type FileCommand, requiredFlag } from "./command.ts";

/** Moving a workspace between stores of any kind (decisions.md, "Data over time"). */
export const moveCommands: Record<string, FileCommand> = {
  "export": {
    usage: "export --to <new file>",
    summary: "Writes every record of the store to a file another store can import (a move).",
    onFile: (settings, flags) => exportStore(settings, requiredFlag(flags, "to")),
    remote: { down: "to" },
  },
  "import": {
    usage: "import --from <export file>",
    summary: "Reads an export into an empty store.",
    onFile: (settings, flags) => importStore(settings, requiredFlag(flags, "from")),
    remote: { up: "from" },
  },
};
