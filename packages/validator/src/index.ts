export { type NameSet, scanAgentText } from "./agentText.js";
export { Scope, type ValidatorContext } from "./context.js";
export { findHidden, smuggledText } from "./hidden.js";
export { inspectArguments } from "./inspect.js";
export {
  flagItem,
  type ItemFinding,
  itemName,
  LISTINGS,
  type ListingKind,
  MAX_ITEM_STRINGS,
  NOTICE_PREFIX,
  scanItem,
  shownName,
  WITHHELD_META,
  withItems,
} from "./listing.js";
export { sanitizeResponse, sanitizeServerMessage } from "./messages.js";
export { NameIndex, NameKeys } from "./names.js";
export {
  credentialField,
  scanElicitation,
  scanInstructions,
  scanPrompt,
  scanSampling,
} from "./protocolText.js";
export { sanitizeResult } from "./sanitize.js";
export { describeSensitivity, sensitivity } from "./sensitive.js";
