// lib/ui/assets/app.js is imported as text (lib/ui/server.ts)
declare const text: string;
export default text;
