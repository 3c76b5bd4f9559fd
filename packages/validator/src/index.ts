export {
  type AgentTextClass,
  type AgentTextContext,
  type AgentTextFinding,
  type NameSet,
  scanAgentText,
} from "./agentText.js";
export { CONFUSABLES_DATE, CONFUSABLES_VERSION } from "./confusablesData.js";
export { type Finding, Scope, type ValidatorContext } from "./context.js";
export { findHidden, type HiddenFinding, smuggledText } from "./hidden.js";
export { inspectArguments } from "./inspect.js";
export {
  flagItem,
  type ItemFinding,
  itemName,
  JOINED,
  LISTINGS,
  type ListingContext,
  type ListingKind,
  listingNotice,
  MAX_ITEM_STRINGS,
  NOTICE_PREFIX,
  scanItem,
  shownName,
  WITHHELD_META,
  withItems,
} from "./listing.js";
export { type SanitizedMessage, sanitizeResponse, sanitizeServerMessage } from "./messages.js";
export {
  foldLookalikes,
  NameIndex,
  NameKeys,
  nameKeys,
  sameName,
  skeleton,
  withoutIgnorables,
} from "./names.js";
export {
  credentialField,
  type ScannedText,
  scanElicitation,
  scanInstructions,
  scanPrompt,
  scanSampling,
  type TextFinding,
  textNotice,
} from "./protocolText.js";
export { type SanitizeContext, Sanitizer, sanitizeResult } from "./sanitize.js";
export { describeSensitivity, type Sensitivity, sensitivity } from "./sensitive.js";
