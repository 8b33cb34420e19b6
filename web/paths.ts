/** Where the settings screen lives; every page and form of it is under here. */
export const SETTINGS = "/settings/integrations";
