/**
 * Whether a name (an environment variable, a setting, a JSON field) names a secret: the policy's
 * `secretName`, read on the name as an environment variable would spell it.
 */
import { aboutASecret, secretName } from "@mcpguard/policy";

const NOT_ALNUM = /[^A-Z0-9]/g;

/** `aws.secret-key` -> `AWS_SECRET_KEY`. */
export function envName(name: string): string {
  return name.toUpperCase().replace(NOT_ALNUM, "_");
}

export function secretLooking(name: string): boolean {
  // The name as written too: `passwordMinLength` keeps the word breaks its spelling in capitals loses.
  return secretName(envName(name)) && !aboutASecret(name);
}
