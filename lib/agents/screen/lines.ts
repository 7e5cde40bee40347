// Lines of a captured screen, as the screen rules (regions.ts) and the question reader
// (question.ts) see them: horizontal rules, and a line with its box edges dropped.

/** a horizontal rule: at least 8 rule characters, optional box corners, nothing else */
const RULE_LINE = /^\s*[╭┌├╰└]?[─━═╌╍┄┅\-]{8,}[╮┐┤╯┘]?\s*$/;

/** is the line a horizontal rule (a box's edge, a divider) */
export const isRuleLine = (l: string): boolean => RULE_LINE.test(l);

/** box edges and surrounding space of a line inside a box */
const EDGES = /^[\s│┃║]+|[\s│┃║]+$/g;

/** the line without box edges and surrounding space, inner runs of space as one */
export const cleanLine = (l: string) => l.replace(EDGES, "").replace(/\s+/g, " ");
