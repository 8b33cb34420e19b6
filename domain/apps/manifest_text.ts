/** A manifest's text, JSON or YAML as Slack's app settings export either. */
import { parse as parseYaml } from "yaml";
import { ApiError } from "../../core/errors.ts";

/** JSON or YAML text, as a value; the 422 on `manifest` when it is neither. */
export function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    try {
      return parseYaml(text);
    } catch (e) {
      throw new ApiError(
        422,
        `The manifest is neither JSON nor YAML: ${(e as Error).message.split("\n")[0]}`,
        {
          manifest: ["/: neither JSON nor YAML"],
        },
      );
    }
  }
}
