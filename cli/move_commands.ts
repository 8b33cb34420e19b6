import { exportStore, importStore } from "../domain/moves.ts";
import { type FileCommand, requiredFlag } from "./command.ts";

/** Moving a workspace between stores of any kind (decisions.md, "Data over time"). */
export const moveCommands: Record<string, FileCommand> = {
  "export": {
    usage: "export --to <new file>",
    onFile: (settings, flags) => exportStore(settings, requiredFlag(flags, "to")),
  },
  "import": {
    usage: "import --from <export file>",
    onFile: (settings, flags) => importStore(settings, requiredFlag(flags, "from")),
  },
};
